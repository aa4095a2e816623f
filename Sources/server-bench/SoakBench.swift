import Foundation
import Synchronization
import EnRouteDomain
import EnRouteAPI

/// `server-bench soak`: creates, runs and ends TRIPS trips against a live `enroute serve` over
/// keep-alive connections, and prints the server's resident memory every REPORT trips.
///
/// Each worker runs one trip at a time for a customer that changes every 100 trips (accounts come
/// and go, each saving a card): a quote, a ride assigned by ops, one location batch, then completed (three in
/// four) or cancelled by the customer; every tenth trip is a delivery (quoted first) through merchant accept,
/// ready and delivered.
struct SoakBench {
    let port: UInt16
    let secret: String
    let trips: Int
    let report: Int
    let workers: Int
    let serverPID: Int32
    /// With `--burst N`: N customers each ask for a ride at once, and nothing else happens.
    let burst: Int

    init(_ args: BenchArguments) {
        port = UInt16(args.int("port", 18_300))
        secret = args.string("secret")
        trips = args.int("trips", 200_000)
        report = args.int("report", 50_000)
        workers = max(1, args.int("workers", 8))
        serverPID = Int32(args.int("pid", 0))
        burst = args.int("burst", 0)
    }

    /// The resident set of `pid` in KiB, from /proc.
    static func rssKiB(_ pid: Int32) -> Int {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") })
        else { return -1 }
        return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") ?? -1
    }

    /// The CPU time `pid` has used so far (user and system), in seconds, from /proc.
    static func cpuSeconds(_ pid: Int32) -> Double {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = text.lastIndex(of: ")")
        else { return 0 }
        // After the command's closing parenthesis: state is field 3, utime 14 and stime 15.
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// The server's `enroute_payment_lag_seconds` (how far its settlements are behind), or -1 when unreadable.
    static func paymentLag(port: UInt16, ops: String) -> Double {
        guard let connection = try? FanoutBench.Connection(port: port),
            let metrics = try? connection.request("GET", "/metrics", token: ops), metrics.status == 200,
            let line = metrics.body.split(separator: "\n").first(where: { $0.hasPrefix("enroute_payment_lag_seconds ") }
            )
        else { return -1 }
        return Double(line.split(separator: " ").last ?? "") ?? -1
    }

    func run() throws {
        guard !secret.isEmpty, serverPID > 0 else {
            throw FanoutBench.Failure(description: "soak needs --secret and --pid")
        }
        let auth = Authenticator(secret: secret, now: { Date() })
        let ops = try auth.token(account: "soak-ops", role: .ops, lifetime: 86_400)
        let merchant = try auth.token(account: "m1", role: .merchant, lifetime: 86_400)
        if burst > 0 { return try runBurst(auth) }
        let done = Atomic<Int>(0), failures = Atomic<Int>(0)
        let firstError = Mutex<String?>(nil)
        let start = Date()
        let lastReport = Mutex((at: start, cpu: Self.cpuSeconds(serverPID)))
        FileHandle.standardOutput.write(
            Data(
                String(
                    format: "soak: %d trips, %d workers; RSS at start %.1f MiB\n", trips, workers,
                    Double(Self.rssKiB(serverPID)) / 1024
                ).utf8))
        let perWorker = (trips + workers - 1) / workers
        let group = DispatchGroup()
        for w in 0..<workers {
            let count = min(perWorker, trips - w * perWorker)
            guard count > 0 else { continue }
            group.enter()
            Thread.detachNewThread { [self] in
                defer { group.leave() }
                do {
                    let connection = try FanoutBench.Connection(port: port)
                    let provider = "soak-p\(w)"
                    let providerToken = try auth.token(account: provider, role: .provider, lifetime: 86_400)
                    var customerToken = ""
                    for i in 0..<count {
                        if i % 100 == 0 {
                            customerToken = try auth.token(
                                account: "soak-c\(w)-\(i / 100)", role: .customer, lifetime: 86_400)
                            try connection.addCard(token: customerToken)
                        }
                        do {
                            try runTrip(
                                connection, w: w, i: i, customer: customerToken, provider: provider,
                                providerToken: providerToken,
                                ops: ops, merchant: merchant)
                        } catch {
                            failures.wrappingAdd(1, ordering: .relaxed)
                            firstError.withLock { if $0 == nil { $0 = "\(error)" } }
                        }
                        let total = done.wrappingAdd(1, ordering: .relaxed).newValue
                        if total % report == 0 {
                            let at = Date(), cpu = Self.cpuSeconds(serverPID)
                            let (since, cpuBefore) = lastReport.withLock { last in
                                defer { last = (at, cpu) }; return last
                            }
                            let line = String(
                                format:
                                    "after %7d trips: RSS %7.1f MiB  (%.0f trips/s; last %d: %.1f trips/s, %.2f ms "
                                    + "server CPU per trip; payment lag %.1f s)\n",
                                total, Double(Self.rssKiB(serverPID)) / 1024,
                                Double(total) / at.timeIntervalSince(start), report,
                                Double(report) / at.timeIntervalSince(since), (cpu - cpuBefore) * 1000 / Double(report),
                                Self.paymentLag(port: port, ops: ops))
                            FileHandle.standardOutput.write(Data(line.utf8))
                        }
                    }
                } catch {
                    firstError.withLock { if $0 == nil { $0 = "\(error)" } }
                }
            }
        }
        group.wait()
        let failed = failures.load(ordering: .relaxed)
        print(
            "soak: \(done.load(ordering: .relaxed)) trips in \(Int(Date().timeIntervalSince(start))) s, "
                + "\(failed) failed"
                + (firstError.withLock { $0 }.map { "; first error: \($0)" } ?? ""))
        if failed > 0 { throw FanoutBench.Failure(description: "\(failed) trips failed") }
    }

    /// `burst` rides from as many customers, as fast as `workers` connections allow; they stay searching.
    private func runBurst(_ auth: Authenticator) throws {
        let failures = Atomic<Int>(0)
        // Untimed: each customer saves a card and takes a quote, as the app does before the tap that requests.
        let prepared = Mutex<[Int: (token: String, body: String)]>([:])
        let preparing = DispatchGroup()
        for w in 0..<workers {
            preparing.enter()
            Thread.detachNewThread { [self] in
                defer { preparing.leave() }
                guard let connection = try? FanoutBench.Connection(port: port) else { return }
                for i in stride(from: w, to: burst, by: workers) {
                    guard let token = try? auth.token(account: "burst-c\(i)", role: .customer, lifetime: 3600),
                        (try? connection.addCard(token: token)) != nil,
                        let body = try? connection.quotedRide(
                            token: token, pickup: #"{"lat":60.1699,"lng":24.9384}"#,
                            dropoff: #"{"lat":60.1841,"lng":24.9497}"#)
                    else { continue }
                    prepared.withLock { $0[i] = (token, body) }
                }
            }
        }
        preparing.wait()
        let requests = prepared.withLock { $0 }
        let start = Date()
        let group = DispatchGroup()
        for w in 0..<workers {
            group.enter()
            Thread.detachNewThread { [self] in
                defer { group.leave() }
                guard let connection = try? FanoutBench.Connection(port: port) else {
                    failures.wrappingAdd(1, ordering: .relaxed); return
                }
                for i in stride(from: w, to: burst, by: workers) {
                    guard let request = requests[i],
                        let created = try? connection.request(
                            "POST", "/v1/trips", token: request.token,
                            headers: ["Idempotency-Key": "burst-\(serverPID)-\(i)"],
                            body: request.body),
                        created.status == 201
                    else { failures.wrappingAdd(1, ordering: .relaxed); continue }
                }
            }
        }
        group.wait()
        let failed = failures.load(ordering: .relaxed)
        FileHandle.standardOutput.write(
            Data(
                String(
                    format: "burst: %d rides searching after %.1f s (%d failed): RSS %.1f MiB\n", burst - failed,
                    Date().timeIntervalSince(start), failed, Double(Self.rssKiB(serverPID)) / 1024
                ).utf8))
        if failed > 0 { throw FanoutBench.Failure(description: "\(failed) rides failed") }
    }

    private func runTrip(
        _ c: FanoutBench.Connection, w: Int, i: Int, customer: String, provider: String, providerToken: String,
        ops: String, merchant: String
    ) throws {
        func expect(_ r: (status: Int, body: String), _ status: Int, _ what: String) throws {
            guard r.status == status else {
                throw FanoutBench.Failure(description: "\(what): \(r.status) \(r.body.prefix(200))")
            }
        }
        let key = ["Idempotency-Key": "soak-\(serverPID)-\(w)-\(i)"]
        let assign = #"{"providerId":"\#(provider)"}"#
        func step(_ id: String, _ name: String) throws {
            try expect(
                c.request(
                    "POST", "/v1/provider/trips/\(id)/steps", token: providerToken,
                    body: #"{"changeId":"\#(w)-\#(i)-\#(name)","step":"\#(name)","#
                        + #""deviceTime":"2026-10-20T18:40:00Z"}"#),
                200, name)
        }
        func fix(_ n: Int) throws {
            let at = ISO8601DateFormatter().string(from: Date())
            try expect(
                c.request(
                    "POST", "/v1/provider/locations", token: providerToken,
                    body:
                        #"{"batchId":"\#(w)-\#(i)-\#(n)","fixes":[{"lat":60.17,"lng":24.94,"heading":0,"speed":5,"#
                        + #""accuracy":5,"recordedAt":"\#(at)"}]}"#
                ),
                200, "locations")
        }
        if i % 10 == 9 {
            let body = try c.quotedOrder(
                token: customer,
                basket:
                    #""merchantId":"m1","items":[{"sku":"coffee","quantity":1}],"destination":{"lat":60.18,"#
                    + #""lng":24.95}"#
            )
            let created = try c.request("POST", "/v1/orders", token: customer, headers: key, body: body)
            try expect(created, 201, "place order")
            guard let id = FanoutBench.field("orderId", in: created.body) else {
                throw FanoutBench.Failure(description: "no orderId")
            }
            try expect(
                c.request(
                    "POST", "/v1/merchant/orders/\(id)/accept", token: merchant, body: #"{"preparationMinutes":5}"#),
                200, "merchant accept")
            try expect(c.request("POST", "/v1/ops/trips/\(id)/assign", token: ops, body: assign), 200, "assign")
            try expect(c.request("POST", "/v1/merchant/orders/\(id)/ready", token: merchant), 200, "ready")
            try step(id, "onTheWay")
            try fix(0)
            try step(id, "delivered")
            return
        }
        let body = try c.quotedRide(
            token: customer, pickup: #"{"lat":60.1699,"lng":24.9384}"#, dropoff: #"{"lat":60.1841,"lng":24.9497}"#)
        let created = try c.request("POST", "/v1/trips", token: customer, headers: key, body: body)
        try expect(created, 201, "request ride")
        guard let id = FanoutBench.field("id", in: created.body) else {
            throw FanoutBench.Failure(description: "no id")
        }
        try expect(c.request("POST", "/v1/ops/trips/\(id)/assign", token: ops, body: assign), 200, "assign")
        if i % 4 == 3 {
            try expect(c.request("POST", "/v1/trips/\(id)/cancel", token: customer), 200, "cancel")
            return
        }
        try step(id, "driverArrived")
        try step(id, "onTrip")
        try fix(0)
        try step(id, "completed")
    }
}
