public import Foundation
public import EnRouteModels

/// After a trip: its receipt, a tip and a rating.
public protocol TripReceiptAPI: Sendable {
    /// The receipt; a 404 problem until the payment settles.
    func receipt(tripID: String) async throws -> Receipt
    /// Tips the provider, once per trip; retries with the same `idempotencyKey` tip at most once.
    func tip(tripID: String, amountMinor: Int, idempotencyKey: UUID) async throws
    /// Rates the trip's provider, once.
    func rate(tripID: String, stars: Int, comment: String?) async throws
}
