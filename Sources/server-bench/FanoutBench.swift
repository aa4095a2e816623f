import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Fan-out latency against a running server: thousands of SSE watchers on one stream, and one
/// publisher sending one event at a time. For each event, the time from sending it to each watcher
/// reading it, measured in this process on CLOCK_MONOTONIC. Targets (`--target`):
///
/// - `enroute`: one ride on `enroute serve`; watchers on `GET /v1/trips/{id}/events`, the provider
///   posting one fix per batch to `POST /v1/provider/locations`.
/// - `nchan`: nginx with the nchan pub/sub module, the peer: watchers on `GET /sub`, events posted to `POST /pub`.
/// - `raw`: `server-bench fanout-floor`, the floor: a loop of `send()`s of the framed event to every socket.
///
/// `--watch-port` connects the watchers to another server than the one published to: on a cluster, a fix accepted by
/// node A (`--port`) and read by watchers on node B, which has it only through the live bus.
///
/// The watchers are read by one epoll loop on loopback; the client shares the machine's cores with
/// the server, so the figures include the client's own reading time (the same for every target).
///
/// `--cpu-pids P,Q`: the server's processes (every one: nginx's master and workers), whose CPU time over the counted
/// events (from /proc, user + system) the RESULT line then carries with the deliveries, for the cost per delivery.
struct FanoutBench {
    let port: UInt16
    let watchPort: UInt16
    let target: String
    let label: String
    let customerToken: String
    let providerToken: String
    let opsToken: String
    let providerAccount: String
    let watchers: Int
    let fixes: Int
    let seconds: Double
    let cpuPids: [Int32]?

    init(_ args: BenchArguments) {
        port = UInt16(args.int("port", 18_200))
        watchPort = UInt16(args.int("watch-port", Int(port)))
        target = args.string("target", "enroute")
        label = args.string("label", target)
        customerToken = args.string("customer-token")
        providerToken = args.string("provider-token")
        opsToken = args.string("ops-token")
        providerAccount = args.string("provider-account", "bench-provider")
        watchers = args.int("watchers", 10_000)
        fixes = args.int("fixes", 100)
        seconds = args.double("seconds", 120)
        cpuPids = ProcessCPU.pids(args.string("cpu-pids"))
    }

    struct Failure: Error, CustomStringConvertible { let description: String }

    /// How to watch and how to publish event `k` (whose body carries `"seq":k`) on the target.
    struct Plan {
        var watch: [UInt8]
        var publish: (Connection, Int) throws -> Void
        var accepted: Set<Int>
    }

    func plan(_ control: Connection) throws -> Plan {
        switch target {
        case "enroute":
            // As the rider's app: a saved card and a quote first (before anything is measured).
            try control.addCard(token: customerToken)
            let ride = try control.quotedRide(
                token: customerToken, pickup: #"{"lat":60.1699,"lng":24.9384}"#,
                dropoff: #"{"lat":60.1841,"lng":24.9497}"#)
            let created = try control.request(
                "POST", "/v1/trips", token: customerToken,
                headers: ["Idempotency-Key": "fanout-\(getpid())-\(Int(Date().timeIntervalSince1970))"],
                body: ride)
            guard created.status == 201, let tripId = Self.field("id", in: created.body) else {
                throw Failure(description: "create ride: \(created.status) \(created.body)")
            }
            // Ops hands the ride to the bench's provider (no dispatch round in the measurement).
            let assigned = try control.request(
                "POST", "/v1/ops/trips/\(tripId)/assign", token: opsToken,
                body: #"{"providerId":"\#(providerAccount)"}"#)
            guard assigned.status == 200 else {
                throw Failure(description: "assign: \(assigned.status) \(assigned.body)")
            }
            let origin = Date()
            let token = providerToken
            return Plan(
                watch: Array(
                    ("GET /v1/trips/\(tripId)/events HTTP/1.1\r\nHost: bench\r\nAccept: "
                        + "text/event-stream\r\nAuthorization: Bearer \(customerToken)\r\n\r\n").utf8),
                publish: { control, k in
                    let recorded = ISO8601DateFormatter.string(
                        from: origin.addingTimeInterval(Double(k) * 0.05), timeZone: TimeZone(identifier: "UTC")!,
                        formatOptions: [.withInternetDateTime, .withFractionalSeconds])
                    let body =
                        #"{"batchId":"f\#(k)","fixes":[{"lat":\#(60.17 + Double(k) * 1e-5),"lng":24.94,"heading":0,"#
                        + #""speed":5,"accuracy":5,"recordedAt":"\#(recorded)"}]}"#
                    try control.send("POST", "/v1/provider/locations", token: token, body: body)
                }, accepted: [200])
        case "nchan", "raw":
            // About the size of a driverMoved event.
            return Plan(
                watch: Array("GET /sub HTTP/1.1\r\nHost: bench\r\nAccept: text/event-stream\r\n\r\n".utf8),
                publish: { control, k in
                    let body =
                        #"{"tripId":"FANOUT","seq":\#(k),"lat":\#(60.17 + Double(k) * 1e-5),"lng":24.94,"heading":0,"#
                        + #""speed":5,"recordedAt":"2026-12-01T10:00:00.000Z","#
                        + #""pad":"................................"}"#
                    try control.send("POST", "/pub", token: "", body: body)
                }, accepted: [200, 201, 202])
        default:
            throw Failure(description: "unknown target \(target) (enroute, nchan or raw)")
        }
    }

    func run() throws {
        let deadline = Percentiles.now() + seconds
        let control = try Connection(port: port)
        let plan = try plan(control)
        let watch = try openWatchers(plan, until: deadline)
        print(
            "fan-out bench (\(target)): \(watchers) SSE watchers" + (watchPort == port ? "" : " on port \(watchPort)")
                + ", \(fixes) events posted to port \(port)")
        let timed = try publish(plan, on: control, to: watch, until: deadline)
        watch.closeAll()
        let all = Percentiles(timed.deliveries), last = Percentiles(timed.lastWatcher)
        print(
            String(
                format: "event -> each watcher: %d deliveries  p50 %.2f ms  p99 %.2f ms  max %.2f ms  (missed %d)",
                timed.deliveries.count, all(50) * 1e3, all(99) * 1e3, all(100) * 1e3, timed.missed))
        print(
            String(
                format: "event -> every watcher (the last one): %d events  p50 %.2f ms  p99 %.2f ms",
                timed.lastWatcher.count, last(50) * 1e3, last(99) * 1e3))
        var cost = ""
        if let cpu = timed.serverCPU {
            let perDelivery = cpu / Double(max(timed.deliveries.count, 1)) * 1e6
            print(
                String(
                    format: "server CPU over the counted events: %.3f s, %.3f us per delivery (event x watcher); "
                        + "this client's: %.3f s", cpu, perDelivery, timed.clientCPU))
            cost = String(format: " %.4f %d", cpu, timed.deliveries.count)
        }
        // One line for the script to compare targets: p50 and p99 per delivery, p99 of the last watcher, missed; with
        // --cpu-pids, then the server's CPU seconds over the counted events and the deliveries.
        print(
            String(
                format: "RESULT %@ %.3f %.3f %.3f %d", label, all(50) * 1e3, all(99) * 1e3, last(99) * 1e3,
                timed.missed) + cost)
    }

    /// Opens the watchers 500 at a time and waits for each one's opening bytes (an opened stream has sent its
    /// headers and, on enroute, the trip with no seq).
    private func openWatchers(_ plan: Plan, until deadline: Double) throws -> Watchers {
        let watch = Watchers(count: watchers)
        var ready = Set<Int>()
        var opened = 0
        while opened < watchers, Percentiles.now() < deadline {
            let chunk = min(500, watchers - opened)
            for _ in 0..<chunk { try watch.open(port: watchPort, request: plan.watch) }
            opened += chunk
            let chunkEnd = Percentiles.now() + 10
            while ready.count < opened, Percentiles.now() < chunkEnd {
                watch.pump(timeoutMs: 100, target: 0) { ready.insert($0) }
            }
        }
        guard ready.count == watchers else {
            throw Failure(description: "only \(ready.count) of \(watchers) streams opened")
        }
        return watch
    }

    /// The measured events: every delivery's latency, the last watcher's per event, and the deliveries missed.
    struct Deliveries {
        var deliveries: [Double] = []
        var lastWatcher: [Double] = []
        var missed = 0
        /// The server's CPU seconds (`--cpu-pids`) and this process's over the counted events.
        var serverCPU: Double?
        var clientCPU = 0.0
    }

    /// Publishes the events one at a time (three warm-up events first, not counted), each timed to every watcher
    /// for at most 5 s.
    private func publish(
        _ plan: Plan, on control: Connection, to watch: Watchers, until deadline: Double
    ) throws -> Deliveries {
        var timed = Deliveries()
        let warmup = 3
        var latencies: [Double] = []
        latencies.reserveCapacity(watchers)
        var cpu0 = 0.0, client0 = 0.0
        for k in 1...(fixes + warmup) where Percentiles.now() < deadline {
            if k == warmup + 1 {
                cpu0 = cpuPids.map(ProcessCPU.seconds(of:)) ?? 0
                client0 = ProcessCPU.selfSeconds()
            }
            var arrived = 0
            latencies.removeAll(keepingCapacity: true)
            let t0 = Percentiles.now()
            try plan.publish(control, k)
            let limit = t0 + 5
            while arrived < watchers, Percentiles.now() < limit {
                watch.pump(timeoutMs: 50, target: k) { _ in
                    arrived += 1
                    latencies.append(Percentiles.now() - t0)
                }
            }
            let response = try control.readResponse()
            guard plan.accepted.contains(response.status) else {
                throw Failure(description: "event \(k): \(response.status) \(response.body)")
            }
            if k > warmup {
                timed.deliveries += latencies
                timed.lastWatcher.append(latencies.max() ?? 5)
                timed.missed += watchers - arrived
            }
            // Let the server settle between events, as a provider sends every few seconds.
            usleep(20_000)
        }
        timed.serverCPU = cpuPids.map { ProcessCPU.seconds(of: $0) - cpu0 }
        timed.clientCPU = ProcessCPU.selfSeconds() - client0
        return timed
    }

    /// The largest `"seq":N` in `bytes`, or 0.
    static func maxSeq(_ bytes: Slice<UnsafeBufferPointer<UInt8>>) -> Int {
        // "seq":
        let key: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) = (34, 115, 101, 113, 34, 58)
        var best = 0
        var i = bytes.startIndex
        let end = bytes.endIndex
        while i + 6 < end {
            if bytes[i] == key.0, bytes[i + 1] == key.1, bytes[i + 2] == key.2, bytes[i + 3] == key.3,
                bytes[i + 4] == key.4, bytes[i + 5] == key.5
            {
                var j = i + 6, v = 0, digits = 0
                while j < end, bytes[j] >= 48, bytes[j] <= 57 { v = v * 10 + Int(bytes[j] - 48); j += 1; digits += 1 }
                // A number cut off by the end of the read is not trusted until the rest arrives.
                if digits > 0, j < end { best = max(best, v) }
                i = j
            } else {
                i += 1
            }
        }
        return best
    }

    /// A string member of a flat JSON object, enough for `"id":"..."`.
    static func field(_ name: String, in json: String) -> String? {
        guard let range = json.range(of: "\"\(name)\":\"") else { return nil }
        return json[range.upperBound...].split(separator: "\"").first.map(String.init)
    }

    static func connect(port: UInt16) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = port.bigEndian
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        let rc = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard rc == 0 else { close(fd); throw Failure(description: "connect: errno \(errno)") }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        return fd
    }

    /// One blocking keep-alive HTTP/1.1 connection for the control requests.
    final class Connection {
        let fd: Int32
        private var pending: [UInt8] = []

        init(port: UInt16) throws { fd = try FanoutBench.connect(port: port) }
        deinit { close(fd) }

        func send(
            _ method: String, _ path: String, token: String, headers: [String: String] = [:], body: String? = nil
        ) throws {
            var head =
                "\(method) \(path) HTTP/1.1\r\nHost: bench\r\n"
                + (token.isEmpty ? "" : "Authorization: Bearer \(token)\r\n")
            for (k, v) in headers { head += "\(k): \(v)\r\n" }
            let bytes = Array((body ?? "").utf8)
            head += "Content-Type: application/json\r\nContent-Length: \(bytes.count)\r\n\r\n"
            let all = Array(head.utf8) + bytes
            let sent = all.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard sent == all.count else { throw Failure(description: "send failed") }
        }

        func request(
            _ method: String, _ path: String, token: String, headers: [String: String] = [:], body: String? = nil
        ) throws -> (status: Int, body: String) {
            try send(method, path, token: token, headers: headers, body: body)
            return try readResponse()
        }

        func readResponse() throws -> (status: Int, body: String) {
            let separator = Array("\r\n\r\n".utf8)
            var buffer = [UInt8](repeating: 0, count: 16_384)
            func fill() throws {
                let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                guard n > 0 else { throw Failure(description: "connection closed") }
                pending += buffer[0..<n]
            }
            while pending.firstRange(of: separator) == nil { try fill() }
            let end = pending.firstRange(of: separator)!
            let head = String(decoding: pending[..<end.lowerBound], as: UTF8.self)
            let status = Int(head.split(separator: " ").dropFirst().first ?? "") ?? 0
            var length = 0
            for line in head.split(separator: "\r\n") where line.lowercased().hasPrefix("content-length:") {
                length = Int(line.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) ?? 0
            }
            while pending.count < end.upperBound + length { try fill() }
            let body = String(decoding: pending[end.upperBound..<(end.upperBound + length)], as: UTF8.self)
            pending.removeFirst(end.upperBound + length)
            return (status, body)
        }
    }
}
