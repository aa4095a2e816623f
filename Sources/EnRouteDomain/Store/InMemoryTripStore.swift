public import Foundation
import Synchronization

/// A `TripStore` in memory, for tests: transactions run on a copy and replace the state on success.
public final class InMemoryTripStore: TripStore {
    struct State: Sendable {
        var trips: [String: TripRecord] = [:]
        var changes: [String: [ChangeLogEntry]] = [:]
        var keys: [IdempotencyScope: IdempotencyRecord] = [:]
        var outbox: [String: OutboxMessage] = [:]
    }

    private let state = Mutex(State())

    public init() {}

    public func transaction<T: Sendable>(_ body: @escaping @Sendable (any TripTransaction) throws -> T) async throws -> T {
        try state.withLock { s in
            let tx = Transaction(state: s)
            let result = try body(tx)
            s = tx.state
            return result
        }
    }

    public func trip(id: String) throws -> TripRecord? { state.withLock { $0.trips[id] } }

    public func trips(_ query: TripQuery, after cursor: TripCursor?, limit: Int) throws -> TripPage {
        state.withLock { s in
            let rows = s.trips.values
                .filter { query.matches($0) && (cursor?.precedes(createdAt: $0.createdAt.timeIntervalSince1970, id: $0.id) ?? true) }
                .sorted { ($0.createdAt, $0.id) > ($1.createdAt, $1.id) }
            let page = Array(rows.prefix(limit))
            return TripPage(trips: page, next: rows.count > page.count ? page.last.map(TripCursor.init(after:)) : nil)
        }
    }

    public func activeTrips() throws -> [TripRecord] { state.withLock { $0.trips.values.filter(\.status.isActive) } }

    public func changes(tripId: String) throws -> [ChangeLogEntry] { state.withLock { $0.changes[tripId] ?? [] } }

    public func releaseUnansweredIdempotency() async throws -> Int {
        state.withLock { s in
            let before = s.keys.count
            s.keys = s.keys.filter { $0.value.response != nil }
            return before - s.keys.count
        }
    }

    public func purgeIdempotency(before cutoff: Date) async throws {
        state.withLock { s in s.keys = s.keys.filter { $0.value.createdAt >= cutoff } }
    }

    public func dueOutbox(topic: String, now: Date, limit: Int) async throws -> [OutboxMessage] {
        state.withLock { s in
            Array(s.outbox.values.filter { $0.topic == topic && $0.notBefore <= now }
                .sorted { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) }.prefix(limit))
        }
    }

    public func completeOutbox(id: String) async throws { state.withLock { $0.outbox[id] = nil } }

    public func rescheduleOutbox(id: String, attempts: Int, notBefore: Date) async throws {
        state.withLock { s in
            s.outbox[id]?.attempts = attempts
            s.outbox[id]?.notBefore = notBefore
        }
    }

    private final class Transaction: TripTransaction {
        var state: State
        init(state: State) { self.state = state }

        func trip(_ id: String) throws -> TripRecord? { state.trips[id] }
        func activeTrip(customer: String, kind: TripKind) throws -> TripRecord? {
            state.trips.values.filter { $0.customerId == customer && $0.kind == kind && $0.status.isActive }
                .max { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) }
        }
        func insert(_ trip: TripRecord) throws {
            precondition(state.trips[trip.id] == nil, "duplicate trip id")
            state.trips[trip.id] = trip
        }
        func update(_ trip: TripRecord) throws { state.trips[trip.id] = trip }
        func append(_ change: ChangeLogEntry) throws { state.changes[change.tripId, default: []].append(change) }
        func change(tripId: String, changeId: String) throws -> ChangeLogEntry? {
            state.changes[tripId]?.first { $0.changeId == changeId }
        }
        func idempotency(_ scope: IdempotencyScope) throws -> IdempotencyRecord? { state.keys[scope] }
        func save(_ record: IdempotencyRecord) throws { state.keys[record.scope] = record }
        func deleteIdempotency(_ scope: IdempotencyScope) throws { state.keys[scope] = nil }
        func enqueue(_ message: OutboxMessage) throws { state.outbox[message.id] = message }
    }
}
