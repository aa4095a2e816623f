public import Foundation
public import EnRouteDomain

/// A trip store that hands every call to an in-memory store: the base of test stores that watch or delay some calls
/// (override `transaction`).
open class ForwardingTripStore: TripStore, @unchecked Sendable {
    /// The store every call goes to.
    public let base = InMemoryTripStore()
    public init() {}

    open func transaction<T: Sendable>(
        _ body: @escaping @Sendable (any TripTransaction) async throws -> T
    ) async throws -> T {
        try await base.transaction(body)
    }
    public func trip(id: String) throws -> TripRecord? { try base.trip(id: id) }
    public func trips(_ query: TripQuery, after cursor: TripCursor?, limit: Int) throws -> TripPage {
        try base.trips(query, after: cursor, limit: limit)
    }
    public func activeTrips() throws -> [TripRecord] { try base.activeTrips() }
    public func changes(tripId: String) throws -> [ChangeLogEntry] { try base.changes(tripId: tripId) }
    public func purgeIdempotency(before cutoff: Date) async throws { try await base.purgeIdempotency(before: cutoff) }
    public func releaseUnansweredIdempotency() async throws -> Int { try await base.releaseUnansweredIdempotency() }
    public func dueOutbox(topic: String, now: Date, limit: Int) async throws -> [OutboxMessage] {
        try await base.dueOutbox(topic: topic, now: now, limit: limit)
    }
    public func claimOutbox(topic: String, now: Date, until: Date, limit: Int) async throws -> [OutboxMessage] {
        try await base.claimOutbox(topic: topic, now: now, until: until, limit: limit)
    }
    public func completeOutbox(id: String) async throws { try await base.completeOutbox(id: id) }
    public func rescheduleOutbox(id: String, attempts: Int, notBefore: Date) async throws {
        try await base.rescheduleOutbox(id: id, attempts: attempts, notBefore: notBefore)
    }
    public func claimLease(_ name: String, node: String, until: Date, now: Date) async throws -> Bool {
        try await base.claimLease(name, node: node, until: until, now: now)
    }
    public func releaseLease(_ name: String, node: String) async throws {
        try await base.releaseLease(name, node: node)
    }
    public func relayOutbox(
        topic: String, city: String, lease name: String, node: String, now: Date, limit: Int
    ) async throws -> [OutboxMessage]? {
        try await base.relayOutbox(topic: topic, city: city, lease: name, node: node, now: now, limit: limit)
    }
    public func ledger(tripId: String) throws -> [LedgerEntry] { try base.ledger(tripId: tripId) }
    public func ledger(account: String, from: Date, to: Date) throws -> [LedgerEntry] {
        try base.ledger(account: account, from: from, to: to)
    }
    public func ledgerBalance(account: String) async throws -> Int { try await base.ledgerBalance(account: account) }
    public func providerRatings() throws -> [String: RatingTotal] { try base.providerRatings() }
    public func paymentAttempt(intentId: String) throws -> PaymentAttempt? {
        try base.paymentAttempt(intentId: intentId)
    }
    public func unattachedPaymentAttempts(before cutoff: Date) throws -> [PaymentAttempt] {
        try base.unattachedPaymentAttempts(before: cutoff)
    }
}
