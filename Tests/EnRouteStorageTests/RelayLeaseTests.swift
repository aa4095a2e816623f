import Foundation
import Testing
import EnRouteDomain
@testable import EnRouteSQLite
@testable import EnRoutePostgres
import PostgresClient
import TestSupport
import SQLiteClient
import EnRouteModels

/// The live relay's lease per city and its stamps, on every store: one node holds a lease at a time until it runs out
/// or is given up; only the holder stamps, with numbers that continue across a handover, never shared and never
/// skipping a row that commits late.
@Suite(.timeLimit(.minutes(1))) struct RelayLeaseTests {
    enum Backing: Sendable, CustomTestStringConvertible {
        case memory
        case database(StoreBacking)

        static var all: [Backing] { [.memory] + StoreBacking.all.map { .database($0) } }

        var testDescription: String {
            switch self {
            case .memory: "memory"
            case .database(let backing): backing.testDescription
            }
        }
    }

    static let lease = "relay:helsinki"

    /// A fresh store of `backing`, and what removes its database afterwards.
    func makeSUT(_ backing: Backing) throws -> (store: any TripStore, remove: () -> Void) {
        switch backing {
        case .memory: return (InMemoryTripStore(), {})
        case .database(let kind):
            let db = try kind.database("relay")
            return (try db.tripStore(), db.remove)
        }
    }

    func at(_ seconds: TimeInterval) -> Date { Rows.t0.addingTimeInterval(seconds) }

    /// A trip version queued for the fan-out of `city`.
    func version(_ id: String, city: String = "helsinki", at offset: TimeInterval = 0) -> OutboxMessage {
        OutboxMessage(id: id, topic: "live", payload: Array("v-\(id)".utf8), createdAt: at(offset), city: city)
    }

    func enqueue(_ store: any TripStore, _ messages: [OutboxMessage]) async throws {
        try await store.transaction { tx in for message in messages { try await tx.enqueue(message) } }
    }

    @Test(arguments: Backing.all) func aLeaseIsOneNodesUntilItRunsOutOrIsGivenUp(_ backing: Backing) async throws {
        let (store, remove) = try makeSUT(backing)
        defer { remove() }
        #expect(try await store.claimLease(Self.lease, node: "a", until: at(10), now: at(0)))
        #expect(try await store.claimLease(Self.lease, node: "b", until: at(12), now: at(2)) == false)
        #expect(try await store.claimLease(Self.lease, node: "a", until: at(15), now: at(5)), "the holder renews it")
        #expect(
            try await store.claimLease(Self.lease, node: "b", until: at(20), now: at(15)) == false,
            "held to the instant it ends")
        #expect(try await store.claimLease(Self.lease, node: "b", until: at(26), now: at(16)), "run out: taken over")
        #expect(try await store.claimLease(Self.lease, node: "a", until: at(27), now: at(17)) == false)
        try await store.releaseLease(Self.lease, node: "a")  // not a's to give: nothing happens
        #expect(try await store.claimLease(Self.lease, node: "a", until: at(28), now: at(18)) == false)
        try await store.releaseLease(Self.lease, node: "b")
        #expect(
            try await store.claimLease(Self.lease, node: "a", until: at(29), now: at(19)), "given up: taken at once")
        #expect(
            try await store.claimLease("relay:tampere", node: "b", until: at(29), now: at(19)), "each city has its own")
    }

    @Test(arguments: Backing.all) func onlyTheHolderStampsAndTheNumbersContinueAcrossAHandover(
        _ backing: Backing
    ) async throws {
        let (store, remove) = try makeSUT(backing)
        defer { remove() }
        try await enqueue(
            store,
            [version("v1", at: 1), version("v2", at: 2), version("t1", city: "tampere", at: 3), version("v3", at: 4)])
        try await store.transaction { tx in try await tx.enqueue(Rows.message("push", topic: "apns")) }
        #expect(
            try await store.relayOutbox(
                topic: "live", city: "helsinki", lease: Self.lease, node: "a", now: at(5), limit: 10) == nil,
            "no lease, no stamps")
        #expect(try await store.claimLease(Self.lease, node: "a", until: at(20), now: at(5)))
        #expect(
            try await store.relayOutbox(
                topic: "live", city: "helsinki", lease: Self.lease, node: "b", now: at(6), limit: 10) == nil)
        let first = try #require(
            try await store.relayOutbox(
                topic: "live", city: "helsinki", lease: Self.lease, node: "a", now: at(6), limit: 10))
        #expect(
            first.map(\.id) == ["v1", "v2", "v3"] && first.map(\.sequence) == [1, 2, 3]
                && first.allSatisfy { $0.city == "helsinki" })
        // a published v1 and died; v2 and v3 stay stamped. b takes the run-out lease and goes on from 3.
        try await store.completeOutbox(id: "v1")
        try await enqueue(store, [version("v4", at: 7)])
        #expect(try await store.claimLease(Self.lease, node: "b", until: at(40), now: at(30)))
        #expect(
            try await store.relayOutbox(
                topic: "live", city: "helsinki", lease: Self.lease, node: "a", now: at(31), limit: 10) == nil,
            "a holder whose lease was taken stamps nothing")
        let second = try #require(
            try await store.relayOutbox(
                topic: "live", city: "helsinki", lease: Self.lease, node: "b", now: at(31), limit: 2))
        #expect(
            second.map(\.id) == ["v2", "v3"] && second.map(\.sequence) == [2, 3], "up to the limit, in stamp order")
        for message in try #require(
            try await store.relayOutbox(
                topic: "live", city: "helsinki", lease: Self.lease, node: "b", now: at(31), limit: 10))
        {
            try await store.completeOutbox(id: message.id)
        }
        // Given up with nothing left, the numbers survive: the next holder's start after 4.
        try await store.releaseLease(Self.lease, node: "b")
        try await enqueue(store, [version("v5", at: 32)])
        #expect(try await store.claimLease(Self.lease, node: "a", until: at(50), now: at(33)))
        let third = try #require(
            try await store.relayOutbox(
                topic: "live", city: "helsinki", lease: Self.lease, node: "a", now: at(33), limit: 10))
        #expect(third.map(\.id) == ["v5"] && third.map(\.sequence) == [5])
        #expect(
            try await store.dueOutbox(topic: "apns", now: at(33), limit: 10).map(\.id) == ["push"],
            "other topics are left alone")
        #expect(try await store.claimLease("relay:tampere", node: "b", until: at(50), now: at(33)))
        let tampere = try #require(
            try await store.relayOutbox(
                topic: "live", city: "tampere", lease: "relay:tampere", node: "b", now: at(33), limit: 10))
        #expect(tampere.map(\.id) == ["t1"] && tampere.map(\.sequence) == [1], "each city has its own numbers")
    }

    /// Versions committed while the holder stamps (on PostgreSQL, rows whose sequence was taken before an earlier
    /// commit's) are each stamped once, with numbers 1…n and no gap.
    @Test(arguments: Backing.all) func rowsCommittedWhileTheHolderStampsAreEachStampedOnceWithNoGap(
        _ backing: Backing
    ) async throws {
        let (store, remove) = try makeSUT(backing)
        defer { remove() }
        #expect(try await store.claimLease(Self.lease, node: "a", until: at(100), now: at(0)))
        let count = 40
        let stamped = try await withThrowingTaskGroup(of: [OutboxMessage].self) { group in
            for n in 0..<count {
                group.addTask {
                    try await enqueue(store, [version("v\(n)", at: Double(n) / 100)]); return []
                }
            }
            group.addTask {
                var seen: [OutboxMessage] = []
                for _ in 0..<20 {
                    let batch =
                        try await store.relayOutbox(
                            topic: "live", city: "helsinki", lease: Self.lease, node: "a", now: at(1), limit: 100) ?? []
                    for message in batch { try await store.completeOutbox(id: message.id) }
                    seen += batch
                    await Task.yield()
                }
                return seen
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        let rest = try #require(
            try await store.relayOutbox(
                topic: "live", city: "helsinki", lease: Self.lease, node: "a", now: at(1), limit: 100))
        let all = stamped + rest
        #expect(Set(all.map(\.id)).count == count && all.count == count, "every row once")
        #expect(
            all.compactMap(\.sequence) == Array(1...UInt64(count)),
            "numbered in the order they were handed out, without a gap")
    }

    /// On PostgreSQL with the database's clock, a lease runs out by that clock: a short one is taken over once it has.
    @Test func aLeaseRunsOutByTheDatabasesClock() async throws {
        guard let url = PostgresTestServer.url else { return }
        let schema = PostgresTestServer.freshSchema("relayclock")
        defer { PostgresTestServer.drop(schema, url: url) }
        let store = try PostgresTripStore(url: url, schema: schema, databaseClock: true)
        // The nodes' own clocks are far apart and far from the database's: only the lifetime (until - now) counts.
        // An hour first, so b's try certainly comes before the end however loaded the machine; then a renews it for
        // half a second, and b takes it once that has passed on the database's clock.
        #expect(try await store.claimLease(Self.lease, node: "a", until: at(3_600), now: at(0)))
        #expect(try await store.claimLease(Self.lease, node: "b", until: at(10_000.5), now: at(10_000)) == false)
        #expect(
            try await store.claimLease(Self.lease, node: "a", until: at(0.5), now: at(0)), "the holder renews, for less"
        )
        try await eventually("b took the lease once it ran out on the database's clock", within: .seconds(20)) {
            try await store.claimLease(Self.lease, node: "b", until: at(0.5), now: at(0))
        }
        #expect(
            try await store.relayOutbox(
                topic: "live", city: "helsinki", lease: Self.lease, node: "a", now: at(0), limit: 10) == nil)
    }

    /// A version queued by an older build, before the outbox knew cities, gets its city from its envelope and is
    /// relayed.
    @Test func aVersionQueuedBeforeTheUpgradeIsRelayedInItsCity() async throws {
        let file = try TemporaryDatabase("relaymigration")
        defer { file.remove() }
        do {
            let db = try SQLiteDatabase(path: file.path)
            defer { db.close() }
            try db.execute("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at REAL NOT NULL)")
            for (index, sql) in SQLiteTripStore.migrations.prefix(while: { !$0.contains("ADD COLUMN city") })
                .enumerated()
            {
                try db.execute(sql)
                try db.run(
                    "INSERT INTO schema_migrations (version, applied_at) VALUES (?1, ?2)",
                    [.integer(Int64(index + 1)), .real(0)])
            }
            let envelope = BusEnvelope(origin: "old", city: "tampere", message: .relayDue)
            try db.run(
                "INSERT INTO outbox (id, topic, payload, created_at, attempts, not_before) VALUES ('old-1', 'live', "
                    + "?1, 0, 0, 0)",
                [.blob(Array(try WireCoding.encoder().encode(envelope)))])
        }
        let store = try SQLiteTripStore(path: file.path)
        #expect(try await store.claimLease("relay:tampere", node: "a", until: at(10), now: at(0)))
        let relayed = try #require(
            try await store.relayOutbox(
                topic: "live", city: "tampere", lease: "relay:tampere", node: "a", now: at(0), limit: 10))
        #expect(relayed.map(\.id) == ["old-1"] && relayed.map(\.sequence) == [1])
    }

    /// The same on PostgreSQL: a version queued before the upgrade gets its city from its envelope's JSON.
    @Test func aVersionQueuedBeforeTheUpgradeIsRelayedInItsCityOnPostgres() async throws {
        guard let url = PostgresTestServer.url else { return }
        let schema = PostgresTestServer.freshSchema("relaymigration")
        defer { PostgresTestServer.drop(schema, url: url) }
        do {
            let setup = try PostgresConnection(url: url)
            try setup.execute("CREATE SCHEMA \(schema)")
            let db = try PostgresConnection(url: url, searchPath: schema)
            try db.migrate(
                Array(PostgresTripStore.migrations.prefix(while: { !$0.contains("ADD COLUMN city") })),
                table: "schema_migrations", appliedAt: at(0))
            let envelope = BusEnvelope(origin: "old", city: "tampere", message: .relayDue)
            _ = try db.run(
                "INSERT INTO outbox (id, topic, payload, created_at, attempts, not_before) VALUES ('old-1', 'live', "
                    + "$1, 0, 0, 0)",
                [.bytea(Array(try WireCoding.encoder().encode(envelope)))])
        }
        let store = try PostgresTripStore(url: url, schema: schema)
        defer { store.close() }
        #expect(try await store.claimLease("relay:tampere", node: "a", until: at(10), now: at(0)))
        let relayed = try #require(
            try await store.relayOutbox(
                topic: "live", city: "tampere", lease: "relay:tampere", node: "a", now: at(0), limit: 10))
        #expect(relayed.map(\.id) == ["old-1"] && relayed.map(\.sequence) == [1])
    }
}
