import Foundation
import Synchronization
import Testing
import EnRouteModels
import EnRouteDomain
import EnRouteAPI
import EnRouteSQLite
import TestSupport

/// The trip store's transaction contract: transactions in flight at once, conflicts found by version and snapshot
/// checks, and the trip service running a transaction that lost again to the right result.
@Suite struct TripStoreConcurrencyTests {
    static let at = Date(timeIntervalSince1970: 1_792_520_000)
    static let ops = Account(id: "ops1", role: .ops)
    static let merchant = Account(id: "m1", role: .merchant)

    /// A placed order from m1 to c1, at version 1.
    static func order(_ id: String = "O1") -> TripRecord {
        var trip = TripRecord(
            id: id, kind: .delivery, status: .delivery(.placed), customerId: "c1",
            pickup: Coordinate(lat: 60.1689, lng: 24.9316), dropoff: Coordinate(lat: 60.1841, lng: 24.9497),
            createdAt: at)
        trip.merchantId = "m1"
        trip.items = [OrderItem(sku: "coffee", quantity: 1)]
        trip.merchantStep = .pending
        return trip
    }

    static func service(_ store: any TripStore, conflictRetries: Int = 8) -> TripService {
        TripService(
            store: store, directory: TestDirectory.helsinki, ids: SequentialIDGenerator(prefix: "T"),
            conflictRetries: conflictRetries, now: { at })
    }

    /// The in-memory store with a hook between each transaction's body and its commit: it yields there
    /// (so other transactions interleave) and, while `hookRuns` lasts, runs `hook`, whose own transactions
    /// pass straight through.
    final class InterleavingStore: ForwardingTripStore, @unchecked Sendable {
        let yields: Int
        let hookRuns = Atomic<Int>(0)
        let hook = Mutex<(@Sendable () async throws -> Void)?>(nil)
        let afterCommitHook = Mutex<(@Sendable () async throws -> Void)?>(nil)
        @TaskLocal static var inHook = false

        init(yields: Int = 0) { self.yields = yields; super.init() }

        /// Runs `hook` before the commit of the next `times` outer transactions.
        func beforeCommit(times: Int = 1, _ hook: @escaping @Sendable () async throws -> Void) {
            self.hook.withLock { $0 = hook }
            hookRuns.store(times, ordering: .sequentiallyConsistent)
        }

        /// Runs `hook` once, after the next outer transaction commits and before it returns.
        func afterCommit(_ hook: @escaping @Sendable () async throws -> Void) {
            afterCommitHook.withLock { $0 = hook }
        }

        override func transaction<T: Sendable>(
            _ body: @escaping @Sendable (any TripTransaction) async throws -> T
        ) async throws -> T {
            let result = try await inner(body)
            if !Self.inHook,
                let hook = afterCommitHook.withLock({ h in
                    defer { h = nil }; return h
                })
            {
                try await Self.$inHook.withValue(true) { try await hook() }
            }
            return result
        }

        private func inner<T: Sendable>(
            _ body: @escaping @Sendable (any TripTransaction) async throws -> T
        ) async throws -> T {
            try await base.transaction { [self] tx in
                let result = try await body(tx)
                for _ in 0..<yields { await Task.yield() }
                if !Self.inHook, hookRuns.wrappingSubtract(1, ordering: .sequentiallyConsistent).oldValue > 0,
                    let hook = hook.withLock({ $0 })
                {
                    try await Self.$inHook.withValue(true) { try await hook() }
                }
                return result
            }
        }
    }

    /// Inserts `trip` with its first log entry.
    static func seed(_ store: any TripStore, _ trip: TripRecord) async throws {
        try await store.transaction { tx in
            try await tx.insert(trip)
            try await tx.append(
                ChangeLogEntry(
                    tripId: trip.id, version: trip.version, status: trip.status.name, actorRole: .customer,
                    actorId: trip.customerId, serverTime: trip.createdAt))
        }
    }

    /// Opens transaction A, which waits (yielding, bounded) for transaction B to commit before it finishes;
    /// returns whether B committed while A was still open, and how many transactions were open inside B.
    static func holdOneOpenWhileAnotherCommits(
        _ store: any TripStore, yields: Int
    ) async throws -> (bCommittedInsideA: Bool, openInsideB: Int?) {
        let aOpen = Atomic<Bool>(false), bDone = Atomic<Bool>(false)
        let a = Task {
            try await store.transaction { tx in
                aOpen.store(true, ordering: .sequentiallyConsistent)
                let sawB = await comesToHold(within: yields) { bDone.load(ordering: .sequentiallyConsistent) }
                try await tx.insert(Self.order("A"))
                return sawB
            }
        }
        try await eventually("A is open") { aOpen.load(ordering: .sequentiallyConsistent) }
        let open: Int? = try await store.transaction { tx in
            try await tx.insert(Self.order("B"))
            return (store as? InMemoryTripStore)?.transactionsInFlight
        }
        bDone.store(true, ordering: .sequentiallyConsistent)
        let sawB = try await a.value
        #expect(try store.trip(id: "A") != nil && store.trip(id: "B") != nil, "both transactions committed")
        return (sawB, open)
    }

    // MARK: - The store

    @Test func twoTransactionsAreInFlightAtOnceOnTheInMemoryStore() async throws {
        let store = InMemoryTripStore()
        let (bCommittedInsideA, open) = try await Self.holdOneOpenWhileAnotherCommits(store, yields: 200_000)
        #expect(bCommittedInsideA, "B committed while A was still open")
        #expect(open == 2)
        #expect(store.transactionsInFlight == 0)
    }

    @Test func theSQLiteStoreKeepsOneWriterBehindTheSameAPI() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("enroute-tx-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try SQLiteTripStore(path: folder.appendingPathComponent("db.sqlite").path)
        // B waits for A's turn to end: A gives up waiting for it (a bounded wait), then both commit.
        let (bCommittedInsideA, _) = try await Self.holdOneOpenWhileAnotherCommits(store, yields: 2_000)
        #expect(!bCommittedInsideA)
        // Its version check refuses a stale write like any other store.
        await #expect(throws: TripStoreConflict.self) {
            try await store.transaction { tx in try await tx.update(Self.order("A"), expectedVersion: 7) }
        }
    }

    @Test func aWriteOfATripAnotherTransactionChangedSinceTheSnapshotIsAConflictAndWritesNothing() async throws {
        let store = InMemoryTripStore()
        try await Self.seed(store, Self.order())
        let aRead = Atomic<Bool>(false), bDone = Atomic<Bool>(false)
        let a = Task {
            try await store.transaction { tx in
                var trip = try #require(try await tx.trip("O1"))
                aRead.store(true, ordering: .sequentiallyConsistent)
                try await eventually("B committed") { bDone.load(ordering: .sequentiallyConsistent) }
                trip.problem = "from A"
                trip.version += 1
                // The row A read is still at version 1 in A's snapshot, so the check passes here; the commit decides.
                try await tx.update(trip, expectedVersion: 1)
                try await tx.enqueue(OutboxMessage(id: "from-A", topic: "apns", payload: [], createdAt: Self.at))
            }
        }
        try await eventually("A has read") { aRead.load(ordering: .sequentiallyConsistent) }
        try await store.transaction { tx in
            var trip = try #require(try await tx.trip("O1"))
            trip.problem = "from B"
            trip.version += 1
            try await tx.update(trip, expectedVersion: 1)
        }
        bDone.store(true, ordering: .sequentiallyConsistent)
        await #expect(throws: TripStoreConflict.self) { try await a.value }
        #expect(try store.trip(id: "O1")?.problem == "from B")
        #expect(try store.trip(id: "O1")?.version == 2)
        #expect(
            try await store.dueOutbox(topic: "apns", now: Self.at, limit: 10).isEmpty,
            "the loser's outbox message was not written")
        // A stale expected version is refused at once.
        await #expect(throws: TripStoreConflict.self) {
            try await store.transaction { tx in try await tx.update(Self.order(), expectedVersion: 1) }
        }
    }

    // MARK: - The service

    @Test func aMoveThatLosesToAConcurrentMoveIsRetriedAndBothChangesAreKept() async throws {
        let store = InterleavingStore()
        try await Self.seed(store, Self.order())
        let service = Self.service(store)
        // Between the merchant's accept and its commit, ops report a problem on the same order.
        store.beforeCommit { _ = try await service.move("O1", .reportProblem("Rider delayed"), by: Self.ops) }
        let accepted = try await service.move("O1", .merchantAccept(preparationMinutes: 5), by: Self.merchant)
        #expect(service.conflictsRetried == 1)
        #expect(accepted.version == 3)
        #expect(accepted.merchantStep == .preparing)
        #expect(accepted.problem == "Rider delayed", "the accept was applied on top of the problem, not over it")
        #expect(try store.trip(id: "O1") == accepted)
        let log = try store.changes(tripId: "O1")
        #expect(log.map(\.version) == [1, 2, 3])
        #expect(log.map(\.actorId) == ["c1", "ops1", "m1"])
    }

    @Test func watchersNeverSeeAVersionGoBackWhenConcurrentCommitsReturnOutOfOrder() async throws {
        let store = InterleavingStore()
        try await Self.seed(store, Self.order())
        let service = Self.service(store)
        let published = Mutex<[Int]>([])
        service.hub.onPublish { steps in published.withLock { $0 += steps.map(\.version) } }
        // The accept commits version 2, but before it gets back to the service a problem report commits
        // and publishes version 3.
        store.afterCommit { _ = try await service.move("O1", .reportProblem("Rider delayed"), by: Self.ops) }
        let accepted = try await service.move("O1", .merchantAccept(preparationMinutes: 5), by: Self.merchant)
        #expect(accepted.version == 2)
        #expect(published.withLock { $0 } == [3], "version 2 came back after 3 and was not sent to watchers")
        #expect(try service.cached("O1")?.version == 3)
    }

    @Test func fiftyConcurrentMovesOfOneTripEndWithAConsistentVersionChain() async throws {
        // Each transaction yields before it commits, so the moves overlap and most lose at least once.
        let store = InterleavingStore(yields: 3)
        try await Self.seed(store, Self.order())
        // A move loses only to another move's commit, so 49 retries always suffice for 50 moves.
        let service = Self.service(store, conflictRetries: 49)
        let results = try await withThrowingTaskGroup(of: TripRecord.self) { group in
            for i in 0..<50 {
                group.addTask { try await service.move("O1", .reportProblem("problem \(i)"), by: Self.ops) }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(service.conflictsRetried > 0, "the moves really overlapped")
        #expect(results.map(\.version).sorted() == Array(2...51), "each move has a version of its own")
        let final = try #require(try store.trip(id: "O1"))
        #expect(final.version == 51)
        #expect(final == results.first { $0.version == 51 }, "the store holds the last move's result")
        let log = try store.changes(tripId: "O1")
        #expect(log.map(\.version) == Array(1...51), "one log entry per version, none lost, none twice")
        #expect(Set(results.map(\.problem)).count == 50)
    }

    @Test func aMoveThatKeepsLosingPastItsRetriesIsContendedAndWritesNothing() async throws {
        let store = InterleavingStore()
        try await Self.seed(store, Self.order())
        let service = Self.service(store, conflictRetries: 2)
        // Every attempt loses: before each of its three commits, ops change the order.
        store.beforeCommit(times: 3) { _ = try await service.move("O1", .reportProblem("again"), by: Self.ops) }
        await #expect(throws: TripError.contended) {
            try await service.move("O1", .merchantAccept(preparationMinutes: 5), by: Self.merchant)
        }
        #expect(service.conflictsRetried == 2)
        #expect(try store.changes(tripId: "O1").map(\.actorId) == ["c1", "ops1", "ops1", "ops1"])
        #expect(try store.trip(id: "O1")?.merchantStep == .pending)
        // The API answers 503 problem+json with Retry-After.
        let error = APIErrors.httpError(.contended) { $0.id }
        #expect(error.status == 503)
        #expect(error.response.headers["Retry-After"] == "1")
        #expect(error.response.headers["Content-Type"] == "application/problem+json")
    }

    @Test func aRideRequestedWhileAnotherIsCommittingIsRetriedIntoAlreadyActive() async throws {
        let store = InterleavingStore()
        let service = Self.service(store)
        let request = TripRequest(
            pickup: Coordinate(lat: 60.1699, lng: 24.9384), dropoff: Coordinate(lat: 60.1841, lng: 24.9497),
            productID: "economy")
        let customer = Account(id: "c1", role: .customer)
        let other = Mutex<TripRecord?>(nil)
        // Both read "no active ride"; the other commits first, so this one must not insert a second.
        store.beforeCommit {
            let ride = try await service.requestRide(request, by: customer)
            other.withLock { $0 = ride }
        }
        let refusal: TripError?
        do {
            _ = try await service.requestRide(request, by: customer)
            refusal = nil
        } catch let error as TripError {
            refusal = error
        }
        #expect(refusal == .alreadyActive(try #require(other.withLock { $0 })))
        #expect(service.conflictsRetried == 1)
        #expect(try store.activeTrips().filter { $0.customerId == "c1" && $0.kind == .ride }.count == 1)
    }

    @Test func twoClaimsOfOneIdempotencyKeyInFlightAtOnceProceedOnce() async throws {
        let store = InterleavingStore()
        let service = Self.service(store)
        let scope = IdempotencyScope(accountId: "c1", method: "POST", path: "/v1/trips", key: "key-12345")
        let context = IdempotencyContext(scope: scope, fingerprint: "f") { _ in
            StoredResponse(status: 201, contentType: "", body: [])
        }
        let other = Mutex<IdempotencyClaim?>(nil)
        store.beforeCommit {
            let claim = try await service.claim(context)
            other.withLock { $0 = claim }
        }
        let first = try await service.claim(context)
        #expect(other.withLock { $0 } == .proceed)
        #expect(first == .inFlight, "the claim that lost sees the winner's key, not a second go-ahead")
    }
}
