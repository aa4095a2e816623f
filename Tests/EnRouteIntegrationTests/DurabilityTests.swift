import Foundation
import Testing
import Synchronization
import HTTPTransport
import CurlTransport
import EnRouteModels
import EnRouteDomain
import EnRouteAPI
import EnRouteSQLite
import TestSupport

/// The real `enroute serve` process, killed with SIGKILL mid-burst and restarted on the same database.
@Suite(.serialized) struct DurabilityTests {
    static let secret = "durability-test-secret-0123456789"

    /// The built `enroute serve` on `database` (seeded with the demo directory first unless `seed` is false), with
    /// `arguments` and `environment` added; its port is read from the log's "listening on" line.
    final class Server {
        let process = Process()
        let port: Int

        init(
            database: String, secret: String = DurabilityTests.secret, arguments: [String] = [],
            environment: [String: String] = [:],
            seed: Bool = true
        ) throws {
            let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
                .appendingPathComponent("enroute")
            guard FileManager.default.isExecutableFile(atPath: binary.path) else {
                throw Failure("build the enroute product first (swift build): \(binary.path) is missing")
            }
            if seed {
                // The demo directory first, as `make demo` does: the orders below name m1 and its SKUs.
                let seeding = Process()
                seeding.executableURL = binary
                seeding.arguments = ["seed", "--city", "helsinki", "--db", database]
                seeding.standardOutput = FileHandle.nullDevice
                try seeding.run()
                seeding.waitUntilExit()
                guard seeding.terminationStatus == 0 else {
                    throw Failure("enroute seed exited \(seeding.terminationStatus)")
                }
            }
            process.executableURL = binary
            process.arguments = ["serve", "--port", "0", "--db", database, "--secret", secret] + arguments
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
            let stderr = Pipe()
            process.standardError = stderr
            process.standardOutput = FileHandle.nullDevice
            try process.run()
            // The server logs its port once it listens.
            var text = ""
            var port: Int?
            while port == nil {
                let chunk = stderr.fileHandleForReading.availableData
                guard !chunk.isEmpty else { throw Failure("enroute exited before listening: \(text)") }
                text += String(decoding: chunk, as: UTF8.self)
                if let range = text.range(of: #"listening on http://127\.0\.0\.1:(\d+)"#, options: .regularExpression) {
                    port = Int(text[range].split(separator: ":").last ?? "")
                }
            }
            self.port = port!
        }

        var pid: Int32 { process.processIdentifier }

        func kill() {
            Glibc.kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }

        func stop() {
            process.terminate()
            process.waitUntilExit()
        }
    }

    final class Ledger: Sendable {
        let creates = Mutex<[Ack]>([])
        let steps = Mutex<[StepAck]>([])
    }

    struct Ack: Sendable { let key: String; let customer: String; let orderId: String; let body: String }
    struct StepAck: Sendable { let orderId: String; let changeId: String; let provider: String }

    static func call(
        _ http: CurlHTTPClient, port: Int, token: String, _ method: String, _ path: String, json: String? = nil,
        key: String? = nil
    ) async throws -> HTTPClientResponse {
        var headers = ["Authorization": "Bearer \(token)"]
        if json != nil { headers["Content-Type"] = "application/json" }
        if let key { headers["Idempotency-Key"] = key }
        return try await http.send(
            HTTPClientRequest(
                method: method, url: URL(string: "http://127.0.0.1:\(port)\(path)")!, headers: headers,
                body: json.map { Data($0.utf8) }, timeout: .seconds(5)))
    }

    static let basket =
        #""merchantId":"m1","items":[{"sku":"bread","quantity":1}],"destination":{"lat":60.18,"lng":24.95}"#

    /// An order body naming a fresh quote for the basket, as the app asks for one; nil when the server refused (a rate
    /// limit).
    static func quotedOrder(_ http: CurlHTTPClient, port: Int, token: String) async throws -> String? {
        let quoted = try await call(http, port: port, token: token, "POST", "/v1/orders/quote", json: "{\(basket)}")
        guard quoted.status == 200 else { return nil }
        return #"{\#(basket),"quoteId":"\#(try quoted.decode(OrderQuote.self).quoteId)"}"#
    }

    @Test func everyAcknowledgedCreateAndStepSurvivesSIGKILLExactlyOnce() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent(
            "enroute-durability-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let database = dir.appendingPathComponent("enroute.sqlite").path
        let auth = Authenticator(secret: Self.secret, now: { Date() })
        let http = CurlHTTPClient(defaultTimeout: .seconds(5))
        let merchant = try auth.token(account: "m1", role: .merchant)
        let ops = try auth.token(account: "ops1", role: .ops)

        let server = try Server(database: database)
        let ledger = Ledger()
        let port = server.port
        let workers = (0..<6).map { w in
            Task {
                let customer = "dc\(w)", provider = "dp\(w)"
                let customerToken = try auth.token(account: customer, role: .customer),
                    providerToken = try auth.token(account: provider, role: .provider)
                // The customer's card, saved once; each order then names its own quote.
                let card = try await Self.call(
                    http, port: port, token: customerToken, "POST", "/v1/payment-methods",
                    json: #"{"token":"pm_card_visa"}"#)
                guard card.status == 201 || card.status == 200 else { throw Failure("saving a card: \(card.status)") }
                var pending: String?
                for i in 0..<10_000 {
                    let key = "durable-\(w)-\(i)"
                    if pending == nil { pending = try await Self.quotedOrder(http, port: port, token: customerToken) }
                    guard let body = pending else { continue }
                    let created = try await Self.call(
                        http, port: port, token: customerToken, "POST", "/v1/orders", json: body, key: key)
                    // A quote refused only by the rate limit is still good for the next try; any other answer needs a
                    // new one.
                    if created.status != 429 { pending = nil }
                    guard created.status == 201 else { continue }
                    let order = try created.decode(TrackingDTO.self).orderId
                    ledger.creates.withLock { $0.append(Ack(key: key, customer: customer, orderId: order, body: body)) }
                    _ = try await Self.call(
                        http, port: port, token: merchant, "POST", "/v1/merchant/orders/\(order)/accept",
                        json: #"{"preparationMinutes":5}"#)
                    _ = try await Self.call(
                        http, port: port, token: ops, "POST", "/v1/ops/trips/\(order)/assign",
                        json: #"{"providerId":"\#(provider)"}"#)
                    _ = try await Self.call(
                        http, port: port, token: merchant, "POST", "/v1/merchant/orders/\(order)/ready")
                    let change = "step-\(w)-\(i)"
                    let step = try await Self.call(
                        http, port: port, token: providerToken, "POST", "/v1/provider/trips/\(order)/steps",
                        json: #"{"changeId":"\#(change)","step":"onTheWay","deviceTime":"2026-10-20T18:40:00Z"}"#)
                    if step.status == 200 {
                        ledger.steps.withLock {
                            $0.append(StepAck(orderId: order, changeId: change, provider: provider))
                        }
                    }
                }
            }
        }
        // Kill once the burst is well under way, while requests are in flight.
        try await eventually("30 steps are acknowledged", within: .seconds(120)) {
            ledger.steps.withLock({ $0.count }) >= 30
        }
        server.kill()
        for worker in workers { _ = await worker.result }

        let acknowledged = ledger.creates.withLock { $0 }, stepped = ledger.steps.withLock { $0 }
        #expect(acknowledged.count >= 30)
        let restarted = try Server(database: database)
        defer { restarted.stop() }

        for ack in acknowledged {
            let token = try auth.token(account: ack.customer, role: .customer)
            let tracking = try await Self.call(
                http, port: restarted.port, token: token, "GET", "/v1/orders/\(ack.orderId)/tracking")
            #expect(tracking.status == 200, "acknowledged order \(ack.orderId) is present")
            let replay = try await Self.call(
                http, port: restarted.port, token: token, "POST", "/v1/orders", json: ack.body, key: ack.key)
            #expect(replay.status == 201)
            #expect(
                try replay.decode(TrackingDTO.self).orderId == ack.orderId, "the key still answers with the same order")
            #expect(replay.header("Idempotent-Replayed") == "true")
        }
        let store = try SQLiteTripStore(path: database)
        let all = try store.trips(status: nil, limit: 100_000)
        // No key produced two orders: at most one order per create attempt that reached the server.
        #expect(Set(all.map(\.id)).count == all.count)
        #expect(Set(acknowledged.map(\.orderId)).count == acknowledged.count)
        for step in stepped {
            let log = try store.changes(tripId: step.orderId)
            #expect(
                log.filter { $0.changeId == step.changeId }.count == 1, "step \(step.changeId) applied exactly once")
            let token = try auth.token(account: step.provider, role: .provider)
            let resent = try await Self.call(
                http, port: restarted.port, token: token, "POST", "/v1/provider/trips/\(step.orderId)/steps",
                json: #"{"changeId":"\#(step.changeId)","step":"onTheWay","deviceTime":"2026-10-20T18:40:00Z"}"#)
            #expect(resent.status == 200)
            #expect(try store.changes(tripId: step.orderId).count == log.count, "a resent step is not applied twice")
        }
    }

    @Test func sigtermDrainsAndExitsZero() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("enroute-term-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let server = try Server(database: dir.appendingPathComponent("e.sqlite").path)
        let health = try await CurlHTTPClient().send(
            HTTPClientRequest(url: URL(string: "http://127.0.0.1:\(server.port)/healthz")!))
        #expect(health.status == 200)
        server.stop()
        #expect(server.process.terminationReason == .exit)
        #expect(server.process.terminationStatus == 0)
    }

    /// A server started with `--parent-pid` drains and exits 0 once that process is gone, even one that ended without a
    /// chance to stop the server (a script killed with SIGKILL).
    @Test func theServerStopsOnceTheProcessNamedByParentPidIsGone() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("enroute-parent-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let starter = Process()
        starter.executableURL = URL(fileURLWithPath: "/bin/sleep")
        starter.arguments = ["600"]
        try starter.run()
        let server = try Server(
            database: dir.appendingPathComponent("e.sqlite").path,
            arguments: ["--parent-pid", String(starter.processIdentifier)])
        #expect(server.process.isRunning)
        Glibc.kill(starter.processIdentifier, SIGKILL)
        starter.waitUntilExit()
        try await eventually("the server stops", within: .seconds(30)) { !server.process.isRunning }
        #expect(server.process.terminationReason == .exit)
        #expect(server.process.terminationStatus == 0)
    }
}
