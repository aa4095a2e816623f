import Foundation
import Testing
import PostgresClient

/// The pool keeps what it will need again: PostgreSQL forks a backend per connection, so a pool that closes and
/// reopens connections under load spends the database's CPU on starting sessions. Runs when ENROUTE_TEST_POSTGRES_URL
/// names a server.
@Suite(.serialized, .timeLimit(.minutes(1))) struct PostgresPoolTests {
    static var servers: [String] { PostgresTestServer.url.map { [$0] } ?? [] }

    /// Holds `count` leases of `pool` until `release` is called; returns once all are held.
    final class HeldLeases: Sendable {
        private let gate = Gate()
        private let tasks: [Task<Void, any Error>]

        init(_ pool: PostgresPool, count: Int) async {
            let (held, holding) = AsyncStream<Void>.makeStream()
            let gate = self.gate
            tasks = (0..<count).map { _ in
                Task {
                    try await pool.withLease { lease in
                        _ = try await lease.run { try $0.query("SELECT 1") }
                        holding.yield()
                        await gate.wait()
                    }
                }
            }
            var seen = 0
            for await _ in held { seen += 1; if seen == count { break } }
        }

        func release() async throws {
            await gate.open()
            for task in tasks { try await task.value }
        }
    }

    /// A synchronous read, as the stores make from any thread (the blocking `withConnection`).
    static func blockingRead(
        _ pool: PostgresPool, _ sql: String, _ values: [PostgresValue] = []
    ) throws -> [PostgresRow] {
        try pool.withConnection { try $0.query(sql, values) }
    }

    /// A blocking read made from inside another one's body: two connections past the cap at once.
    static func nestedBlockingReads(_ pool: PostgresPool) throws {
        try pool.withConnection { _ in _ = try blockingRead(pool, "SELECT 1") }
    }

    @Test(arguments: servers) func blockingReadsWhileEveryCountedConnectionIsLeasedReuseOneSpare(
        _ url: String
    ) async throws {
        let pool = try PostgresPool(url: url, limits: .init(capacity: 2, spare: 2))
        defer { pool.close() }
        let held = await HeldLeases(pool, count: 2)
        #expect(pool.openConnections == 2)
        for n in 0..<50 {
            let row = try Self.blockingRead(pool, "SELECT $1::int", [.text("\(n)")])
            #expect(row.first?.text(0) == "\(n)")
        }
        #expect(pool.connectionsOpened == 3, "each blocking read opened a connection of its own")
        #expect(pool.spareConnections == 1)
        try await held.release()
        // With the leases back, the spare is not needed: the next blocking read takes a counted connection.
        _ = try Self.blockingRead(pool, "SELECT 1")
        #expect(pool.connectionsOpened == 3)
    }

    @Test(arguments: servers) func connectionsStayOpenIdleUpToTheCapAcrossBursts(_ url: String) async throws {
        let pool = try PostgresPool(url: url, limits: .init(capacity: 4))
        defer { pool.close() }
        for _ in 0..<20 {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<4 {
                    group.addTask { _ = try await pool.withConnection { try $0.query("SELECT pg_sleep(0.001)") } }
                }
                try await group.waitForAll()
            }
        }
        #expect(pool.connectionsOpened <= 4, "opened \(pool.connectionsOpened) for bursts of 4 on a cap of 4")
    }

    @Test(arguments: servers) func sparesPastTheirLimitAreClosed(_ url: String) async throws {
        let pool = try PostgresPool(url: url, limits: .init(capacity: 1, spare: 1))
        defer { pool.close() }
        let held = await HeldLeases(pool, count: 1)
        // Two blocking reads at once, both past the cap: two spares open, one is kept.
        try Self.nestedBlockingReads(pool)
        #expect(pool.connectionsOpened == 3)
        #expect(pool.spareConnections == 1)
        try await held.release()
    }
}
