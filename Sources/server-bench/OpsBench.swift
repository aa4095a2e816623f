import Foundation
import Synchronization
import EnRouteBackend
import EnRouteDomain
import EnRouteAPI
import EnRouteModels
import EnRouteNotifications
import EnRouteLogging
import HTTPEngine

/// The request path in process, for counting instructions (bench/callgrind.sh runs it under callgrind): the
/// production backend on SQLite, with a stepped clock, sequential ids and a fixed seed, answers a fixed sequence of
/// requests through its router (authentication, routing, JSON, the domain and the store; no sockets).
///
/// The setup is the same whatever is counted: `--prepare` customers each save a card and place an order, and take
/// one ride quote; a provider is online on an assigned ride. Then `--tracking` order tracking GETs, `--creates` ride
/// creates (each naming a prepared quote, with an Idempotency-Key and the card hold) and `--batches` location
/// batches of `--fixes` fixes on the ride. A run with a count of 0 measures the setup alone; the difference over the
/// count is the cost of one operation.
struct OpsBench {
    let prepare: Int
    let tracking: Int
    let creates: Int
    let batches: Int
    let fixes: Int
    let directory: String

    init(_ args: BenchArguments) {
        prepare = args.int("prepare", 200)
        tracking = args.int("tracking", 0)
        creates = args.int("creates", 0)
        batches = args.int("batches", 0)
        fixes = args.int("fixes", 10)
        directory = args.string("dir", NSTemporaryDirectory())
    }

    func run() async throws {
        guard creates <= prepare, batches <= prepare, tracking >= 0, fixes > 0 else {
            throw FanoutBench.Failure(
                description: "ops: --creates and --batches must be at most --prepare (\(prepare))")
        }
        let base = URL(fileURLWithPath: directory).appendingPathComponent("ops-bench-\(getpid())")
        try FileManager.default.createDirectory(at: base, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: base) }
        let clock = SteppedTime(Date(timeIntervalSince1970: 1_792_000_000))
        let backend = try Self.backend(in: base, clock: clock)
        let client = OpsClient(router: backend.router, auth: backend.auth, clock: clock)
        let prepared = try await client.prepare(prepare, fixes: fixes)
        let start = clock.now

        for i in 0..<tracking {
            let order = prepared.orders[i % prepared.orders.count]
            try await client.expect(200, "GET", order.path, as: order.customer)
        }
        for i in 0..<creates {
            let quote = prepared.rides[i]
            try await client.expect(
                201, "POST", APIPath.trips, as: quote.customer, body: quote.body,
                headers: ["Idempotency-Key": "create-key-\(i)"])
        }
        var last: [UInt8] = []
        for b in 0..<batches {
            last = try await client.send(batch: b, body: prepared.batches[b], fixes: fixes, from: start)
        }
        print("ops: \(tracking) tracking GETs, \(creates) creates, \(batches) location batches of \(fixes) fixes")
        if batches > 0 { print("the last batch's answer: \(String(decoding: last, as: UTF8.self))") }
    }

    /// The production wiring over SQLite in `base`, on `clock`, with sequential ids; dispatch is not started.
    private static func backend(in base: URL, clock: SteppedTime) throws -> Backend {
        var configuration = BackendConfiguration(
            storage: .sqlite(path: base.appendingPathComponent("ops.sqlite").path),
            secret: "ops-bench-secret-0123456789abcdef")
        configuration.proofDirectory = base.appendingPathComponent("blobs").path
        configuration.rateLimits = .off
        // The checkpointer copies the log on its own connection while requests go on, and how much it copies
        // depends on timing: the count leaves it out (the run stays under this size).
        configuration.sqliteCheckpointPages = 1_000_000
        let effects = BackendEffects(
            clock: ContinuousClock(), now: { clock.now }, tripIDs: SequentialIDGenerator(prefix: "T"),
            offerIDs: SequentialIDGenerator(prefix: "O"), nearbyJitterSeed: 42,
            push: LogPushGateway(log: .discard), log: .discard)
        let backend = try Backend(configuration, effects: effects)
        try backend.seed(OpsClient.directory)
        return backend
    }
}

/// The bench's wall clock: it moves only when the bench steps it, so every run sees the same times.
final class SteppedTime: Sendable {
    private let date: Mutex<Date>
    init(_ start: Date) { date = Mutex(start) }
    var now: Date { date.withLock { $0 } }
    func step(_ seconds: TimeInterval) { date.withLock { $0 = $0.addingTimeInterval(seconds) } }
    func set(_ time: Date) { date.withLock { $0 = time } }
}
