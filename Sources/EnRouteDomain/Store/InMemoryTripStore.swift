public import Foundation
import Synchronization

/// A `TripStore` in memory, for tests, with real concurrency: each transaction runs on a snapshot without
/// holding any lock, keeps its writes aside, and is checked at commit (optimistic, first committer wins).
///
/// At commit, under the lock: a trip or idempotency key this transaction writes must not have been
/// written by a commit after its snapshot, and a customer's unfinished trips it read through `activeTrip`
/// must not have changed; otherwise `transaction` throws `TripStoreConflict` and nothing is written.
public final class InMemoryTripStore: TripStore {
    /// A value and the commit that last wrote it.
    struct Row<Value: Sendable>: Sendable {
        var value: Value
        var commit: Int
    }

    /// Whose unfinished trips of which kind a transaction read.
    struct ActiveSet: Hashable, Sendable {
        let customer: String
        let kind: TripKind
    }

    struct State: Sendable {
        /// The number of the last commit.
        var commit = 0
        var trips: [String: Row<TripRecord>] = [:]
        /// The last commit that changed a customer's unfinished trips of a kind (a trip started or ended).
        var activeChanged: [ActiveSet: Int] = [:]
        var changes: [String: [ChangeLogEntry]] = [:]
        var keys: [IdempotencyScope: Row<IdempotencyRecord>] = [:]
        /// Keys deleted by a commit, kept while an older snapshot may still write them.
        var deletedKeys: [IdempotencyScope: Int] = [:]
        var outbox: [String: OutboxMessage] = [:]
        var attempts: [String: Row<PaymentAttempt>] = [:]
        var ledger: [LedgerEntry] = []
        var ledgerKeys: Set<String> = []
        var ratings: [String: RatingTotal] = [:]
        /// Leases by name: who holds each until when, and the last number stamped under it.
        var leases: [String: Lease] = [:]
        /// Transactions started and not yet finished.
        var inFlight = 0
    }

    struct Lease: Sendable {
        var holder: String?
        var until: Date
        var stamped: UInt64 = 0
    }

    private let state = Mutex(State())

    public init() {}

    /// How many transactions have started and not finished (for tests that hold one open).
    public var transactionsInFlight: Int { state.withLock { $0.inFlight } }

    public func transaction<T: Sendable>(
        _ body: @escaping @Sendable (any TripTransaction) async throws -> T
    ) async throws -> T {
        let snapshot = state.withLock { s in
            s.inFlight += 1
            return s
        }
        let tx = Transaction(snapshot: snapshot)
        let result: T
        do {
            result = try await body(tx)
        } catch {
            state.withLock { Self.finish(&$0) }
            throw error
        }
        try state.withLock { s in
            defer { Self.finish(&s) }
            try tx.writes.withLock { w in
                try Self.validate(w, since: snapshot.commit, against: s)
                Self.apply(w, to: &s)
            }
        }
        return result
    }

    private static func finish(_ s: inout State) {
        s.inFlight -= 1
        // No snapshot older than now remains to write a deleted key.
        if s.inFlight == 0 { s.deletedKeys.removeAll() }
    }

    private static func validate(_ w: Writes, since start: Int, against s: State) throws {
        for id in w.trips.keys where (s.trips[id]?.commit ?? 0) > start { throw TripStoreConflict("trip \(id)") }
        for set in w.activeReads where (s.activeChanged[set] ?? 0) > start {
            throw TripStoreConflict("unfinished \(set.kind.rawValue) trips of \(set.customer)")
        }
        for scope in w.keys.keys where max(s.keys[scope]?.commit ?? 0, s.deletedKeys[scope] ?? 0) > start {
            throw TripStoreConflict("idempotency key \(scope.key)")
        }
        for quote in w.attempts.keys where (s.attempts[quote]?.commit ?? 0) > start {
            throw TripStoreConflict("payment attempt of \(quote)")
        }
        for entry in w.ledger where s.ledgerKeys.contains(entry.movementId + "|" + entry.account) {
            throw TripStoreConflict("ledger movement \(entry.movementId)")
        }
    }

    private static func apply(_ w: Writes, to s: inout State) {
        guard
            !w.trips.isEmpty || !w.keys.isEmpty || !w.changes.isEmpty || !w.outbox.isEmpty || !w.attempts.isEmpty
                || !w.ledger.isEmpty || !w.ratings.isEmpty
        else { return }
        s.commit += 1
        let commit = s.commit
        for (id, trip) in w.trips {
            // A trip that starts, ends or changes hands changes the unfinished set it leaves or joins.
            let before = s.trips[id].map(\.value).flatMap {
                $0.status.isActive ? ActiveSet(customer: $0.customerId, kind: $0.kind) : nil
            }
            let after = trip.status.isActive ? ActiveSet(customer: trip.customerId, kind: trip.kind) : nil
            if before != after {
                if let before { s.activeChanged[before] = commit }
                if let after { s.activeChanged[after] = commit }
            }
            s.trips[id] = Row(value: trip, commit: commit)
        }
        for change in w.changes { s.changes[change.tripId, default: []].append(change) }
        for (scope, record) in w.keys {
            if let record {
                s.keys[scope] = Row(value: record, commit: commit)
                s.deletedKeys[scope] = nil
            } else {
                s.keys[scope] = nil
                s.deletedKeys[scope] = commit
            }
        }
        for message in w.outbox where s.outbox[message.id] == nil { s.outbox[message.id] = message }
        for (quote, attempt) in w.attempts { s.attempts[quote] = Row(value: attempt, commit: commit) }
        for entry in w.ledger { s.ledger.append(entry); s.ledgerKeys.insert(entry.movementId + "|" + entry.account) }
        for (provider, stars) in w.ratings {
            s.ratings[provider, default: RatingTotal(count: 0, sum: 0)].count += 1; s.ratings[provider]!.sum += stars
        }
    }

    public func trip(id: String) throws -> TripRecord? { state.withLock { $0.trips[id]?.value } }

    public func trips(_ query: TripQuery, after cursor: TripCursor?, limit: Int) throws -> TripPage {
        state.withLock { s in
            let rows = s.trips.values.map(\.value)
                .filter {
                    query.matches($0)
                        && (cursor?.precedes(createdAt: $0.createdAt.timeIntervalSince1970, id: $0.id) ?? true)
                }
                .sorted { ($0.createdAt, $0.id) > ($1.createdAt, $1.id) }
            let page = Array(rows.prefix(limit))
            return TripPage(trips: page, next: rows.count > page.count ? page.last.map(TripCursor.init(after:)) : nil)
        }
    }

    public func activeTrips() throws -> [TripRecord] {
        state.withLock { $0.trips.values.map(\.value).filter(\.status.isActive) }
    }

    public func changes(tripId: String) throws -> [ChangeLogEntry] { state.withLock { $0.changes[tripId] ?? [] } }

    public func releaseUnansweredIdempotency() async throws -> Int {
        state.withLock { s in
            let unanswered = s.keys.filter { $0.value.value.response == nil }.map(\.key)
            Self.delete(unanswered, in: &s)
            return unanswered.count
        }
    }

    public func purgeIdempotency(before cutoff: Date) async throws {
        state.withLock { s in Self.delete(s.keys.filter { $0.value.value.createdAt < cutoff }.map(\.key), in: &s) }
    }

    /// Deletes `scopes` as one commit, so that an older snapshot that writes one of them conflicts.
    private static func delete(_ scopes: [IdempotencyScope], in s: inout State) {
        guard !scopes.isEmpty else { return }
        s.commit += 1
        for scope in scopes {
            s.keys[scope] = nil
            if s.inFlight > 0 { s.deletedKeys[scope] = s.commit }
        }
    }

    public func dueOutbox(topic: String, now: Date, limit: Int) async throws -> [OutboxMessage] {
        state.withLock { Self.due(in: $0.outbox, topic: topic, now: now, limit: limit) }
    }

    private static func due(in outbox: [String: OutboxMessage], topic: String, now: Date, limit: Int) -> [OutboxMessage]
    {
        Array(
            outbox.values.filter { $0.topic == topic && $0.notBefore <= now }
                .sorted { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) }.prefix(limit))
    }

    public func claimOutbox(topic: String, now: Date, until: Date, limit: Int) async throws -> [OutboxMessage] {
        state.withLock { s in
            Self.due(in: s.outbox, topic: topic, now: now, limit: limit).map { message in
                var claimed = message
                claimed.notBefore = until
                s.outbox[message.id] = claimed
                return claimed
            }
        }
    }

    public func completeOutbox(id: String) async throws { state.withLock { $0.outbox[id] = nil } }

    public func rescheduleOutbox(id: String, attempts: Int, notBefore: Date) async throws {
        state.withLock { s in
            s.outbox[id]?.attempts = attempts
            s.outbox[id]?.notBefore = notBefore
        }
    }

    public func claimLease(_ name: String, node: String, until: Date, now: Date) async throws -> Bool {
        state.withLock { s in
            var lease = s.leases[name] ?? Lease(holder: nil, until: .distantPast)
            if let holder = lease.holder, holder != node, lease.until >= now { return false }
            lease.holder = node
            lease.until = until
            s.leases[name] = lease
            return true
        }
    }

    public func releaseLease(_ name: String, node: String) async throws {
        state.withLock { s in if s.leases[name]?.holder == node { s.leases[name]?.holder = nil } }
    }

    public func relayOutbox(
        topic: String, city: String, lease name: String, node: String, now: Date, limit: Int
    ) async throws -> [OutboxMessage]? {
        state.withLock { s in
            guard var lease = s.leases[name], lease.holder == node, lease.until >= now else { return nil }
            let mine = s.outbox.values.filter { $0.topic == topic && $0.city == city }
            for message in mine.filter({ $0.sequence == nil && $0.notBefore <= now }).sorted(by: {
                ($0.createdAt, $0.id) < ($1.createdAt, $1.id)
            }) {
                lease.stamped += 1
                s.outbox[message.id]?.sequence = lease.stamped
            }
            s.leases[name] = lease
            return Array(
                s.outbox.values.filter { $0.topic == topic && $0.city == city && $0.sequence != nil }
                    .sorted { ($0.sequence ?? 0) < ($1.sequence ?? 0) }.prefix(limit))
        }
    }

    public func ledger(tripId: String) throws -> [LedgerEntry] {
        state.withLock { $0.ledger.filter { $0.tripId == tripId } }
    }

    public func ledger(account: String, from: Date, to: Date) throws -> [LedgerEntry] {
        state.withLock { $0.ledger.filter { $0.account == account && $0.at >= from && $0.at < to } }
    }

    public func ledgerBalance(account: String) throws -> Int {
        state.withLock { $0.ledger.filter { $0.account == account }.reduce(0) { $0 + $1.amountMinor } }
    }

    public func providerRatings() throws -> [String: RatingTotal] { state.withLock { $0.ratings } }

    public func paymentAttempt(intentId: String) throws -> PaymentAttempt? {
        state.withLock { s in s.attempts.values.map(\.value).first { $0.payment.intentId == intentId } }
    }

    public func unattachedPaymentAttempts(before cutoff: Date) throws -> [PaymentAttempt] {
        state.withLock { s in
            s.attempts.values.map(\.value).filter { $0.tripId == nil && $0.createdAt < cutoff }.sorted {
                $0.createdAt < $1.createdAt
            }
        }
    }

    /// A transaction's writes and the reads its commit check depends on.
    struct Writes: Sendable {
        var trips: [String: TripRecord] = [:]
        var activeReads: Set<ActiveSet> = []
        var changes: [ChangeLogEntry] = []
        /// nil: deleted.
        var keys: [IdempotencyScope: IdempotencyRecord?] = [:]
        var outbox: [OutboxMessage] = []
        var attempts: [String: PaymentAttempt] = [:]
        var ledger: [LedgerEntry] = []
        var ratings: [(String, Int)] = []
    }

    private final class Transaction: TripTransaction, Sendable {
        let snapshot: State
        let writes = Mutex(Writes())
        init(snapshot: State) { self.snapshot = snapshot }

        func trip(_ id: String) throws -> TripRecord? {
            writes.withLock { $0.trips[id] } ?? snapshot.trips[id]?.value
        }

        func activeTrip(customer: String, kind: TripKind) throws -> TripRecord? {
            writes.withLock { w in
                w.activeReads.insert(ActiveSet(customer: customer, kind: kind))
                let written = w.trips
                let stored = snapshot.trips.values.map(\.value).filter { written[$0.id] == nil }
                return (stored + Array(written.values))
                    .filter {
                        $0.customerId == customer && $0.kind == kind && $0.status.isActive && $0.scheduledFor == nil
                    }
                    .max { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) }
            }
        }

        func insert(_ trip: TripRecord) throws {
            try writes.withLock { w in
                guard snapshot.trips[trip.id] == nil, w.trips[trip.id] == nil else {
                    throw TripStoreConflict("trip \(trip.id) (exists)")
                }
                w.trips[trip.id] = trip
            }
        }

        func update(_ trip: TripRecord, expectedVersion: Int) throws {
            try writes.withLock { w in
                guard let current = w.trips[trip.id] ?? snapshot.trips[trip.id]?.value,
                    current.version == expectedVersion
                else {
                    throw TripStoreConflict("trip \(trip.id) (not at version \(expectedVersion))")
                }
                w.trips[trip.id] = trip
            }
        }

        func append(_ change: ChangeLogEntry) throws { writes.withLock { $0.changes.append(change) } }

        func change(tripId: String, changeId: String) throws -> ChangeLogEntry? {
            writes.withLock { w in w.changes.first { $0.tripId == tripId && $0.changeId == changeId } }
                ?? snapshot.changes[tripId]?.first { $0.changeId == changeId }
        }

        func idempotency(_ scope: IdempotencyScope) throws -> IdempotencyRecord? {
            if let written = writes.withLock({ $0.keys[scope] }) { return written }
            return snapshot.keys[scope]?.value
        }

        func save(_ record: IdempotencyRecord) throws { writes.withLock { $0.keys[record.scope] = .some(record) } }
        func deleteIdempotency(_ scope: IdempotencyScope) throws { writes.withLock { $0.keys[scope] = .some(nil) } }
        func enqueue(_ message: OutboxMessage) throws { writes.withLock { $0.outbox.append(message) } }
        func paymentAttempt(quoteId: String) throws -> PaymentAttempt? {
            writes.withLock { $0.attempts[quoteId] } ?? snapshot.attempts[quoteId]?.value
        }
        func save(_ attempt: PaymentAttempt) throws { writes.withLock { $0.attempts[attempt.quoteId] = attempt } }
        func post(_ entries: [LedgerEntry]) throws {
            try Ledger.checkBalanced(entries)
            writes.withLock { $0.ledger += entries }
        }
        func addRating(provider: String, stars: Int) throws { writes.withLock { $0.ratings.append((provider, stars)) } }
    }
}
