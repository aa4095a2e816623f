import Foundation
import Testing
import EnRouteDomain
import EnRouteModels
import SQLiteClient
@testable import EnRouteSQLite
import EnRoutePostgres

/// Every trip store (SQLite, and PostgreSQL when configured) against a real database: transactions, active trips, list
/// pages, the change log,
/// idempotency keys, the outbox and schema migrations.
@Suite(.timeLimit(.minutes(1))) struct TripStoreTests {
    // MARK: - Transactions

    @Test(arguments: StoreBacking.all) func aCommittedTransactionKeepsTheTripItsLogItsKeyAndItsMessageTogether(
        _ backing: StoreBacking
    ) async throws {
        let db = try backing.database()
        defer { db.remove() }
        let store = try db.tripStore()
        let trip = Rows.ride("T1")
        try await store.transaction { tx in
            try await tx.insert(trip)
            try await tx.append(Rows.change("T1", version: 1))
            try await tx.save(Rows.key("k1", answered: true))
            try await tx.enqueue(Rows.message("M1"))
        }
        #expect(try store.trip(id: "T1") == trip)
        #expect(try store.changes(tripId: "T1") == [Rows.change("T1", version: 1)])
        #expect(
            try await store.transaction { tx in try await tx.idempotency(Rows.scope("k1")) }
                == Rows.key("k1", answered: true))
        #expect(try await store.dueOutbox(topic: "apns", now: Rows.t0, limit: 10) == [Rows.message("M1")])
        // A new store on the same file (a restart) reads the same.
        let reopened = try db.tripStore()
        #expect(try reopened.trip(id: "T1") == trip)
        #expect(try reopened.changes(tripId: "T1").count == 1)
    }

    @Test(arguments: StoreBacking.all) func aTransactionThatThrowsLeavesNothingBehindAndKeepsTheOldRow(
        _ backing: StoreBacking
    ) async throws {
        let db = try backing.database()
        defer { db.remove() }
        let store = try db.tripStore()
        try await store.transaction { tx in try await tx.insert(Rows.ride("T1")) }
        await #expect(throws: Abort.self) {
            try await store.transaction { tx in
                var moved = try #require(try await tx.trip("T1"))
                moved.status = .ride(.driverAssigned)
                moved.version = 2
                try await tx.update(moved, expectedVersion: 1)
                try await tx.insert(Rows.ride("T2", customer: "c2"))
                try await tx.append(Rows.change("T2", version: 1))
                try await tx.save(Rows.key("k2", answered: false))
                try await tx.enqueue(Rows.message("M2"))
                throw Abort()
            }
        }
        #expect(try store.trip(id: "T1") == Rows.ride("T1"))
        #expect(try store.trip(id: "T2") == nil)
        #expect(try store.changes(tripId: "T2").isEmpty)
        #expect(try await store.transaction { tx in try await tx.idempotency(Rows.scope("k2")) } == nil)
        #expect(try await store.dueOutbox(topic: "apns", now: Rows.t0, limit: 10).isEmpty)
        #expect(try store.activeTrips().map(\.id) == ["T1"])
    }

    /// The proof a delivered step names is part of the trip it writes: kept by a commit (and a reopen), gone with a
    /// rollback, alike on every store.
    @Test(arguments: StoreBacking.all)
    func aTripsProofCommitsAndRollsBackWithTheStep(_ backing: StoreBacking) async throws {
        let db = try backing.database()
        defer { db.remove() }
        let store = try db.tripStore()
        try await store.transaction { tx in try await tx.insert(Rows.ride("T1")) }
        func step(to proofId: String, expectedVersion: Int, fails: Bool) async throws {
            try await store.transaction { tx in
                var next = try #require(try await tx.trip("T1"))
                next.proofId = proofId
                next.version = expectedVersion + 1
                try await tx.update(next, expectedVersion: expectedVersion)
                if fails { throw Abort() }
            }
        }
        await #expect(throws: Abort.self) { try await step(to: "refused", expectedVersion: 1, fails: true) }
        #expect(try store.trip(id: "T1")?.proofId == nil)
        try await step(to: "u1", expectedVersion: 1, fails: false)
        #expect(try store.trip(id: "T1")?.proofId == "u1")
        #expect(try db.tripStore().trip(id: "T1")?.proofId == "u1")
    }

    @Test(arguments: StoreBacking.all) func aTransactionReadsItsOwnWritesBeforeItCommits(
        _ backing: StoreBacking
    ) async throws {
        let db = try backing.database()
        defer { db.remove() }
        let store = try db.tripStore()
        let seen = try await store.transaction { tx -> (TripRecord?, TripRecord?) in
            try await tx.insert(Rows.ride("T1"))
            return (try await tx.trip("T1"), try await tx.activeTrip(customer: "c1", kind: .ride))
        }
        #expect(seen.0 == Rows.ride("T1") && seen.1 == Rows.ride("T1"))
    }

    @Test(arguments: StoreBacking.all) func concurrentReadModifyWriteTransactionsLoseNoUpdate(
        _ backing: StoreBacking
    ) async throws {
        let db = try backing.database()
        defer { db.remove() }
        let store = try db.tripStore()
        try await store.transaction { tx in try await tx.insert(Rows.ride("T1")) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<20 {
                group.addTask {
                    // A store that runs transactions side by side refuses the losers; the caller runs them again.
                    try await retryingConflicts {
                        try await store.transaction { tx in
                            var trip = try #require(try await tx.trip("T1"))
                            trip.version += 1
                            try await tx.update(trip, expectedVersion: trip.version - 1)
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try store.trip(id: "T1")?.version == 21)
    }

    // MARK: - Active trips

    @Test(arguments: StoreBacking.all) func activeTripsAreTheUnfinishedOnesAndFollowUpdates(
        _ backing: StoreBacking
    ) async throws {
        let db = try backing.database()
        defer { db.remove() }
        let store = try db.tripStore()
        try await store.transaction { tx in
            try await tx.insert(Rows.ride("R-searching", state: .searching))
            try await tx.insert(Rows.ride("R-done", customer: "c2", state: .completed))
            try await tx.insert(Rows.order("O-placed", status: .placed))
            try await tx.insert(Rows.order("O-delivered", status: .delivered))
        }
        #expect(Set(try store.activeTrips().map(\.id)) == ["R-searching", "O-placed"])
        try await store.transaction { tx in
            var ride = try #require(try await tx.trip("R-searching"))
            ride.status = .ride(.cancelled)
            try await tx.update(ride, expectedVersion: ride.version)
        }
        #expect(try store.activeTrips().map(\.id) == ["O-placed"])
    }

    @Test(arguments: StoreBacking.all) func theActiveTripOfACustomerIsTheNewestUnfinishedOneOfThatKind(
        _ backing: StoreBacking
    ) async throws {
        let db = try backing.database()
        defer { db.remove() }
        let store = try db.tripStore()
        try await store.transaction { tx in
            // Several orders may be unfinished at once; rides one at a time (PostgreSQL's unique index refuses a
            // second).
            try await tx.insert(Rows.order("O-old", status: .onTheWay, at: 0))
            try await tx.insert(Rows.order("O-new", status: .placed, at: 60))
            try await tx.insert(Rows.order("O-finished", status: .delivered, at: 90))
            try await tx.insert(Rows.ride("R-finished", state: .completed, at: 120))
            try await tx.insert(Rows.ride("R-new", state: .driverAssigned, at: 150))
            try await tx.insert(Rows.ride("R-other", customer: "c2", at: 180))
        }
        let found = try await store.transaction { tx in
            (
                ride: try await tx.activeTrip(customer: "c1", kind: .ride)?.id,
                order: try await tx.activeTrip(customer: "c1", kind: .delivery)?.id,
                none: try await tx.activeTrip(customer: "c3", kind: .ride)?.id
            )
        }
        #expect(found.ride == "R-new")
        #expect(found.order == "O-new")
        #expect(found.none == nil)
    }

    // MARK: - List pages

    /// Reads every page of `query`, `limit` rows at a time, from the start.
    func allPages(_ store: any TripStore, _ query: TripQuery, limit: Int) throws -> [[TripRecord]] {
        var pages: [[TripRecord]] = []
        var cursor: TripCursor?
        repeat {
            let page = try store.trips(query, after: cursor, limit: limit)
            pages.append(page.trips)
            cursor = page.next
            if pages.count > 100 { Issue.record("the pages never end"); break }
        } while cursor != nil
        return pages
    }

    @Test(arguments: StoreBacking.all, [1, 7, 25, 26])
    func cursorPagesWalkEveryTripOnceNewestFirstAcrossTies(_ backing: StoreBacking, limit: Int) async throws {
        let db = try backing.database()
        defer { db.remove() }
        let store = try db.tripStore()
        // 25 trips, two at each creation time, so the id must break ties between pages.
        let trips = (0..<25).map {
            Rows.ride(String(format: "T%02d", $0), customer: "c\($0)", at: Double($0 / 2) + 0.25)
        }
        try await store.transaction { tx in for trip in trips.shuffled() { try await tx.insert(trip) } }

        let pages = try allPages(store, .all(status: nil), limit: limit)
        let expected = trips.sorted { ($0.createdAt, $0.id) > ($1.createdAt, $1.id) }.map(\.id)
        #expect(pages.flatMap { $0 }.map(\.id) == expected)
        #expect(pages.dropLast().allSatisfy { $0.count == limit }, "only the last page is short")
        #expect(pages.count == (25 + limit - 1) / limit, "no empty page after a full last one")
    }

    @Test(arguments: StoreBacking.all) func filteredPagesHoldOnlyTheirStatusOrTheMerchantsUnfinishedOrders(
        _ backing: StoreBacking
    ) async throws {
        let db = try backing.database()
        defer { db.remove() }
        let store = try db.tripStore()
        try await store.transaction { tx in
            for i in 0..<6 { try await tx.insert(Rows.order("m1-placed-\(i)", status: .placed, at: Double(i))) }
            for i in 0..<3 { try await tx.insert(Rows.order("m1-done-\(i)", status: .delivered, at: Double(10 + i))) }
            for i in 0..<3 {
                try await tx.insert(
                    Rows.order("m2-onTheWay-\(i)", merchant: "m2", status: .onTheWay, at: Double(20 + i)))
            }
            try await tx.insert(Rows.ride("ride", state: .searching, at: 30))
        }
        let placed = try allPages(store, .all(status: "placed"), limit: 4).flatMap { $0 }
        #expect(placed.map(\.id) == (0..<6).reversed().map { "m1-placed-\($0)" })
        let m1 = try allPages(store, .merchantActive(merchantId: "m1"), limit: 4).flatMap { $0 }
        #expect(m1.map(\.id) == (0..<6).reversed().map { "m1-placed-\($0)" })
        let m2 = try store.trips(.merchantActive(merchantId: "m2"), after: nil, limit: 10)
        #expect(m2.trips.count == 3 && m2.next == nil)
        // An order that finishes leaves the merchant's list.
        try await store.transaction { tx in
            var order = try #require(try await tx.trip("m2-onTheWay-1"))
            order.status = .delivery(.delivered)
            try await tx.update(order, expectedVersion: order.version)
        }
        #expect(
            try store.trips(.merchantActive(merchantId: "m2"), after: nil, limit: 10).trips.map(\.id) == [
                "m2-onTheWay-2", "m2-onTheWay-0",
            ])
        #expect(try store.trips(status: nil, limit: 100).count == 13)
    }

    // MARK: - Change log

    @Test(arguments: StoreBacking.all) func theChangeLogIsOldestFirstAndAProvidersChangeIdIsAppliedOnce(
        _ backing: StoreBacking
    ) async throws {
        let db = try backing.database()
        defer { db.remove() }
        let store = try db.tripStore()
        try await store.transaction { tx in
            try await tx.insert(Rows.ride("T1"))
            try await tx.append(Rows.change("T1", version: 1))
            try await tx.append(Rows.change("T1", version: 3, status: "driverArrived", changeId: "ch-b", at: 20))
            try await tx.append(Rows.change("T1", version: 2, status: "driverAssigned", changeId: "ch-a", at: 10))
        }
        #expect(try store.changes(tripId: "T1").map(\.version) == [1, 2, 3])
        #expect(
            try store.changes(tripId: "T1")[1]
                == Rows.change("T1", version: 2, status: "driverAssigned", changeId: "ch-a", at: 10))
        let found = try await store.transaction { tx in
            (try await tx.change(tripId: "T1", changeId: "ch-b"), try await tx.change(tripId: "T1", changeId: "nope"))
        }
        #expect(found.0 == Rows.change("T1", version: 3, status: "driverArrived", changeId: "ch-b", at: 20))
        #expect(found.1 == nil)
        // The same change id again, or the same version again, is refused and rolls its transaction back.
        await #expect(throws: (any Error).self) {
            try await store.transaction { tx in
                try await tx.append(Rows.change("T1", version: 4, status: "onTrip", changeId: "ch-a", at: 30))
            }
        }
        await #expect(throws: (any Error).self) {
            try await store.transaction { tx in
                try await tx.append(Rows.change("T1", version: 3, status: "onTrip", at: 30))
            }
        }
        #expect(try store.changes(tripId: "T1").count == 3)
        #expect(try store.changes(tripId: "other").isEmpty)
    }

    // MARK: - Idempotency keys

    @Test(arguments: StoreBacking.all) func aKeyIsStoredPendingThenAnsweredAndDeletedByScope(
        _ backing: StoreBacking
    ) async throws {
        let db = try backing.database()
        defer { db.remove() }
        let store = try db.tripStore()
        try await store.transaction { tx in try await tx.save(Rows.key("k1", answered: false)) }
        #expect(try await store.transaction { tx in try await tx.idempotency(Rows.scope("k1")) }?.response == nil)
        try await store.transaction { tx in try await tx.save(Rows.key("k1", answered: true)) }
        #expect(
            try await store.transaction { tx in try await tx.idempotency(Rows.scope("k1")) }
                == Rows.key("k1", answered: true))
        // The scope is the account, method, path and key together.
        #expect(try await store.transaction { tx in try await tx.idempotency(Rows.scope("k1", account: "c2")) } == nil)
        try await store.transaction { tx in try await tx.deleteIdempotency(Rows.scope("k1")) }
        #expect(try await store.transaction { tx in try await tx.idempotency(Rows.scope("k1")) } == nil)
    }

    @Test(arguments: StoreBacking.all) func releasingForgetsOnlyUnansweredKeysAndSaysHowMany(
        _ backing: StoreBacking
    ) async throws {
        let db = try backing.database()
        defer { db.remove() }
        let store = try db.tripStore()
        try await store.transaction { tx in
            try await tx.save(Rows.key("pending-1", answered: false))
            try await tx.save(Rows.key("pending-2", answered: false))
            try await tx.save(Rows.key("answered", answered: true))
        }
        #expect(try await store.releaseUnansweredIdempotency() == 2)
        #expect(try await store.releaseUnansweredIdempotency() == 0)
        let left = try await store.transaction { tx in
            var found: [Bool] = []
            for key in ["pending-1", "pending-2", "answered"] {
                found.append(try await tx.idempotency(Rows.scope(key)) != nil)
            }
            return found
        }
        #expect(left == [false, false, true])
    }

    @Test(arguments: StoreBacking.all) func purgingDropsOnlyKeysCreatedBeforeTheCutoff(
        _ backing: StoreBacking
    ) async throws {
        let db = try backing.database()
        defer { db.remove() }
        let store = try db.tripStore()
        try await store.transaction { tx in
            try await tx.save(Rows.key("old", answered: true, at: 0))
            try await tx.save(Rows.key("cutoff", answered: true, at: 100))
            try await tx.save(Rows.key("new", answered: false, at: 200))
        }
        try await store.purgeIdempotency(before: Rows.t0.addingTimeInterval(100))
        let left = try await store.transaction { tx in
            var found: [Bool] = []
            for key in ["old", "cutoff", "new"] { found.append(try await tx.idempotency(Rows.scope(key)) != nil) }
            return found
        }
        #expect(left == [false, true, true])
    }

    // MARK: - Outbox

    @Test(arguments: StoreBacking.all) func theOutboxHandsOutDueMessagesOfATopicOldestFirstUpToTheLimit(
        _ backing: StoreBacking
    ) async throws {
        let db = try backing.database()
        defer { db.remove() }
        let store = try db.tripStore()
        try await store.transaction { tx in
            try await tx.enqueue(Rows.message("M3", at: 30))
            try await tx.enqueue(Rows.message("M1", at: 10))
            try await tx.enqueue(Rows.message("M2", at: 20))
            try await tx.enqueue(Rows.message("later", at: 5, notBefore: 100))
            try await tx.enqueue(Rows.message("other-topic", topic: "liveActivity", at: 0))
        }
        let now = Rows.t0.addingTimeInterval(50)
        #expect(try await store.dueOutbox(topic: "apns", now: now, limit: 10).map(\.id) == ["M1", "M2", "M3"])
        #expect(try await store.dueOutbox(topic: "apns", now: now, limit: 2).map(\.id) == ["M1", "M2"])
        #expect(
            try await store.dueOutbox(topic: "apns", now: Rows.t0.addingTimeInterval(100), limit: 10).map(\.id) == [
                "later", "M1", "M2", "M3",
            ])
        #expect(
            try await store.dueOutbox(topic: "liveActivity", now: now, limit: 10) == [
                Rows.message("other-topic", topic: "liveActivity", at: 0)
            ])
    }

    @Test(arguments: StoreBacking.all) func aRescheduledMessageWaitsItsTurnAndACompletedOneIsGoneAfterARestart(
        _ backing: StoreBacking
    ) async throws {
        let db = try backing.database()
        defer { db.remove() }
        let store = try db.tripStore()
        try await store.transaction { tx in
            try await tx.enqueue(Rows.message("M1", at: 0))
            try await tx.enqueue(Rows.message("M2", at: 1))
        }
        try await store.rescheduleOutbox(id: "M1", attempts: 3, notBefore: Rows.t0.addingTimeInterval(60))
        try await store.completeOutbox(id: "M2")
        #expect(try await store.dueOutbox(topic: "apns", now: Rows.t0.addingTimeInterval(59), limit: 10).isEmpty)
        let reopened = try db.tripStore()
        let due = try await reopened.dueOutbox(topic: "apns", now: Rows.t0.addingTimeInterval(60), limit: 10)
        #expect(due.map(\.id) == ["M1"])
        #expect(due.first?.attempts == 3 && due.first?.notBefore == Rows.t0.addingTimeInterval(60))
        #expect(due.first?.payload == Rows.message("M1").payload)
    }

    /// Several nodes drain one outbox: a claim takes the due messages oldest first, and they are nobody else's until
    /// the claim runs out; concurrent claims share the messages out, each to one claimer.
    @Test(arguments: StoreBacking.all) func aClaimedMessageIsNobodyElsesUntilTheClaimRunsOut(
        _ backing: StoreBacking
    ) async throws {
        let db = try backing.database()
        defer { db.remove() }
        let store = try db.tripStore()
        try await store.transaction { tx in
            for n in 0..<30 { try await tx.enqueue(Rows.message("M\(n)", at: Double(n))) }
        }
        let now = Rows.t0.addingTimeInterval(50), until = Rows.t0.addingTimeInterval(110)
        let first = try await store.claimOutbox(topic: "apns", now: now, until: until, limit: 2)
        #expect(first.map(\.id) == ["M0", "M1"])
        #expect(first.allSatisfy { $0.notBefore == until && $0.attempts == 0 })
        #expect(try await store.dueOutbox(topic: "apns", now: now, limit: 50).count == 28, "claimed ones are not due")
        let claims = try await withThrowingTaskGroup(of: [String].self) { group in
            for _ in 0..<4 {
                group.addTask {
                    try await store.claimOutbox(topic: "apns", now: now, until: until, limit: 10).map(\.id)
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        #expect(claims.count == 28 && Set(claims).count == 28, "each message went to one claimer")
        #expect(
            try await store.claimOutbox(topic: "apns", now: until.addingTimeInterval(-1), until: until, limit: 50)
                .isEmpty)
        // The claimers died without completing: once the claim ran out, the messages are due for whoever comes next.
        #expect(
            try await store.claimOutbox(topic: "apns", now: until, until: until.addingTimeInterval(60), limit: 50).count
                == 30)
    }

    // MARK: - Migrations

    /// The database's table and index names.
    static func schemaNames(_ path: String) throws -> Set<String> {
        let db = try SQLiteDatabase(path: path)
        defer { db.close() }
        return Set(
            try db.query("SELECT name FROM sqlite_master WHERE type IN ('table', 'index') AND name NOT LIKE 'sqlite_%'")
            { $0.text(0) ?? "" })
    }

    /// A file as an older build left it: the first `version` migrations applied and recorded, and one order in it.
    static func oldFile(_ path: String, version: Int, order: TripRecord) throws {
        let db = try SQLiteDatabase(path: path)
        defer { db.close() }
        try db.execute("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at REAL NOT NULL)")
        for (index, sql) in SQLiteTripStore.migrations.prefix(version).enumerated() {
            try db.execute(sql)
            try db.run(
                "INSERT INTO schema_migrations (version, applied_at) VALUES (?1, ?2)",
                [.integer(Int64(index + 1)), .real(0)])
        }
        try db.run(
            """
            INSERT INTO trips (id, kind, status, version, customer_id, provider_id, merchant_id, active, created_at, \
            updated_at, record)
            VALUES (?1, 'delivery', 'placed', 1, ?2, NULL, ?3, 1, ?4, ?4, ?5)
            """,
            [
                .text(order.id), .text(order.customerId), .text(order.merchantId ?? ""),
                .real(order.createdAt.timeIntervalSince1970),
                .blob(try SQLiteTripStore.encode(order)),
            ])
    }

    @Test(arguments: 1..<SQLiteTripStore.migrations.count)
    func anOlderFileIsMigratedToTheCurrentSchemaKeepingItsTrips(version: Int) async throws {
        let db = try TemporaryDatabase()
        defer { db.remove() }
        let order = Rows.order("O-old")
        try Self.oldFile(db.path, version: version, order: order)

        let store = try SQLiteTripStore(path: db.path)
        let applied = try SQLiteDatabase(path: db.path).query("SELECT version FROM schema_migrations ORDER BY version")
        { Int($0.int(0)) }
        #expect(applied == Array(1...SQLiteTripStore.migrations.count))
        #expect(store.schemaVersion == SQLiteTripStore.migrations.count)
        #expect(try store.trip(id: "O-old") == order)
        #expect(try store.trips(.merchantActive(merchantId: "m1"), after: nil, limit: 10).trips == [order])
        let names = try Self.schemaNames(db.path)
        #expect(
            names.isSuperset(of: [
                "trips", "trip_changes", "idempotency_keys", "outbox", "trip_paths",
                "trips_customer_active", "trips_newest", "trips_status_newest", "trips_merchant_active",
            ]))
        #expect(
            names.isDisjoint(with: ["trips_created", "trips_status"]),
            "the list-index migration dropped the old indexes")
        // The migrated file takes the newer tables' rows.
        try await store.transaction { tx in try await tx.enqueue(Rows.message("M1")) }
        #expect(try await store.dueOutbox(topic: "apns", now: Rows.t0, limit: 1).count == 1)
        #expect(try await store.transaction { tx in try await tx.activeTrip(customer: "c1", kind: .delivery) } == order)
    }

    @Test func aFreshFileRecordsEveryMigrationOnce() throws {
        let db = try TemporaryDatabase()
        defer { db.remove() }
        _ = try SQLiteTripStore(path: db.path)
        _ = try SQLiteTripStore(path: db.path)
        let applied = try SQLiteDatabase(path: db.path).query("SELECT version FROM schema_migrations ORDER BY version")
        { Int($0.int(0)) }
        #expect(applied == Array(1...SQLiteTripStore.migrations.count))
    }
}
