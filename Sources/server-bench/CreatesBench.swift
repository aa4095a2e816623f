import Foundation
import Synchronization
import EnRouteAPI
import EnRouteDomain

/// Creates against a running server (one node, or nginx in front of several), as the app places them: each customer
/// saves a card once (untimed); then `--connections` keep-alive connections take quotes for at most `--seconds`; then
/// the
/// same connections confirm each quote with its own Idempotency-Key until the quotes are used or `--seconds` pass.
/// `--kind order` (the default): basket quotes (`POST /v1/orders/quote`), each customer in turn, confirmed by
/// `POST /v1/orders`. `--kind ride`: one economy estimate per customer (`POST /v1/estimates`), confirmed by `POST
/// /v1/trips`,
/// so every customer asks for one ride (a customer may have one unfinished ride) and dispatch starts a search for each.
/// Tokens are signed here with `--secret`. Prints quotes/s and creates/s with the create's p50/p99, and writes `--out`
/// (one
/// line per trip created: its read path, a tab, the customer's token) for the reads that follow (bench/cluster.sh runs
/// wrk on it).
struct CreatesBench {
    let port: UInt16
    let secret: String
    let customers: Int
    let connections: Int
    let seconds: Double
    let out: String
    let tag: String
    let kind: String

    init(_ args: BenchArguments) {
        port = UInt16(args.int("port", 8090))
        secret = args.string("secret")
        customers = args.int("customers", 100)
        connections = args.int("connections", 32)
        seconds = args.double("seconds", 10)
        out = args.string("out")
        tag = args.string("tag", "creates-\(getpid())")
        kind = args.choice("kind", ["order", "ride"])
    }

    static let basket =
        #""merchantId":"m1","items":[{"sku":"coffee","quantity":2}],"destination":{"lat":60.1841,"lng":24.9497}"#
    static let pickup = #"{"lat":60.1699,"lng":24.9384}"#, dropoff = #"{"lat":60.1715,"lng":24.9475}"#

    struct Phase {
        var done: [(customer: Int, body: String)] = []
        var latencies: [Double] = []
        var failures = 0
        var firstError: String?
        var end = 0.0
    }

    func run() throws {
        guard !secret.isEmpty else {
            throw FanoutBench.Failure(description: "creates needs --secret (the server's JWT secret)")
        }
        let auth = Authenticator(secret: secret, now: { Date() })
        let tag = self.tag
        let tokens = try (0..<customers).map {
            try auth.token(account: "\(tag)-c\($0)", role: .customer, lifetime: 86_400)
        }
        try saveCards(tokens)
        let quoteStart = Percentiles.now()
        let quotes = takeQuotes(tokens, until: quoteStart + seconds)
        report("quotes", quotes, start: quoteStart)
        let createStart = Percentiles.now()
        let (creates, lines) = confirm(quotes, tokens: tokens, until: createStart + seconds)
        report("creates", creates, start: createStart)
        if !out.isEmpty {
            let text = lines.map { $0 + "\n" }.joined()
            try text.write(toFile: out, atomically: true, encoding: .utf8)
        }
        let failed = creates.reduce(0) { $0 + $1.failures }
        if failed > 0 {
            throw FanoutBench.Failure(
                description: "\(failed) creates failed; first: \(creates.compactMap(\.firstError).first ?? "")")
        }
    }

    /// Untimed: every customer saves the sandbox's test card.
    private func saveCards(_ tokens: [String]) throws {
        let port = self.port, customers = self.customers, connections = self.connections
        let setupErrors = Mutex<[String]>([])
        parallel(connections) { w in
            do {
                let c = try FanoutBench.Connection(port: port)
                for i in stride(from: w, to: customers, by: connections) { try c.addCard(token: tokens[i]) }
            } catch { setupErrors.withLock { $0.append("\(error)") } }
        }
        if let error = setupErrors.withLock({ $0.first }) {
            throw FanoutBench.Failure(description: "saving cards: \(error)")
        }
    }

    /// Quotes until `end`, each connection for its own customers in turn (rides: each customer once).
    private func takeQuotes(_ tokens: [String], until quoteEnd: Double) -> [Phase] {
        let port = self.port, customers = self.customers, connections = self.connections, rides = kind == "ride"
        let workers = Mutex<[Phase]>(Array(repeating: Phase(), count: connections))
        parallel(connections) { w in
            let mine = Array(stride(from: w, to: customers, by: connections))
            guard !mine.isEmpty, let c = try? FanoutBench.Connection(port: port) else { return }
            var phase = Phase(), n = 0
            while Percentiles.now() < quoteEnd, !rides || n < mine.count {
                let customer = mine[n % mine.count]
                n += 1
                let t0 = Percentiles.now()
                do {
                    let body =
                        try rides
                        ? c.quotedRide(token: tokens[customer], pickup: Self.pickup, dropoff: Self.dropoff)
                        : c.quotedOrder(token: tokens[customer], basket: Self.basket)
                    phase.latencies.append(Percentiles.now() - t0)
                    phase.done.append((customer, body))
                } catch {
                    // A refused quote was read whole; anything else leaves the connection unusable.
                    phase.failures += 1
                    if phase.firstError == nil { phase.firstError = "\(error)" }
                    if !"\(error)".hasPrefix("order quote:") && !"\(error)".hasPrefix("estimates:") { break }
                }
            }
            phase.end = Percentiles.now()
            workers.withLock { $0[w] = phase }
        }
        return workers.withLock { $0 }
    }

    /// Every quote confirmed on the connection that took it, with its own Idempotency-Key, until `end`; the phases
    /// and, in connection order, one line per trip created (its read path, a tab, the customer's token).
    private func confirm(_ quotes: [Phase], tokens: [String], until createEnd: Double) -> ([Phase], [String]) {
        let port = self.port, connections = self.connections, tag = self.tag, rides = kind == "ride"
        let workers = Mutex<[Phase]>(Array(repeating: Phase(), count: connections))
        let created = Mutex<[[String]]>(Array(repeating: [], count: connections))
        parallel(connections) { w in
            let todo = quotes[w].done
            guard !todo.isEmpty, let c = try? FanoutBench.Connection(port: port) else { return }
            var phase = Phase(), lines: [String] = []
            for (i, quote) in todo.enumerated() where Percentiles.now() < createEnd {
                let t0 = Percentiles.now()
                guard
                    let response = try? c.request(
                        "POST", rides ? "/v1/trips" : "/v1/orders", token: tokens[quote.customer],
                        headers: ["Idempotency-Key": "\(tag)-\(rides ? "ride" : "order")-\(w)-\(i)"], body: quote.body)
                else {
                    phase.failures += 1
                    if phase.firstError == nil { phase.firstError = "create: connection lost" }
                    break
                }
                guard response.status == 201, let order = FanoutBench.field(rides ? "id" : "orderId", in: response.body)
                else {
                    phase.failures += 1
                    if phase.firstError == nil {
                        phase.firstError = "create: \(response.status) \(response.body.prefix(200))"
                    }
                    continue
                }
                phase.latencies.append(Percentiles.now() - t0)
                phase.done.append((quote.customer, order))
                lines.append(
                    (rides ? "/v1/trips/\(order)" : "/v1/orders/\(order)/tracking") + "\t\(tokens[quote.customer])")
            }
            phase.end = Percentiles.now()
            workers.withLock { $0[w] = phase }
            created.withLock { $0[w] = lines }
        }
        return (workers.withLock { $0 }, created.withLock { $0.flatMap { $0 } })
    }

    /// Prints one phase's rate and latencies, and its RESULT line: name, per second, p50 ms, p99 ms, failures.
    private func report(_ name: String, _ phases: [Phase], start: Double) {
        let count = phases.reduce(0) { $0 + $1.done.count }
        let failures = phases.reduce(0) { $0 + $1.failures }
        let end = phases.map(\.end).max() ?? start
        let latencies = Percentiles(phases.flatMap(\.latencies))
        let rate = end > start ? Double(count) / (end - start) : 0
        print(
            String(
                format: "%@: %d in %.2f s over %d connections: %.0f/s  p50 %.2f ms  p99 %.2f ms  (%d failed%@)", name,
                count, end - start,
                connections, rate, latencies(50) * 1e3, latencies(99) * 1e3, failures,
                phases.compactMap(\.firstError).first.map { "; first: \($0)" } ?? ""))
        print(
            String(
                format: "RESULT %@ %.1f %.3f %.3f %d", name, rate, latencies(50) * 1e3, latencies(99) * 1e3, failures))
        fflush(nil)  // every stream: bench/create.sh starts its measurements at the quotes' line
    }

    /// `n` threads running `body(index)`, joined.
    private func parallel(_ n: Int, _ body: @escaping @Sendable (Int) -> Void) {
        let group = DispatchGroup()
        for w in 0..<n {
            group.enter()
            Thread.detachNewThread {
                body(w); group.leave()
            }
        }
        group.wait()
    }
}
