public import Foundation
public import EnRouteModels

/// The rider's saved cards and account balance: what the request screen needs to answer a 402.
public protocol RidePaymentsAPI: Sendable {
    /// The saved payment methods, masked (brand and last 4 only).
    func paymentMethods() async throws -> [PaymentMethodSummary]
    /// Saves the gateway token of a card the app added on the payment provider's own page.
    func addPaymentMethod(token: String, makeDefault: Bool) async throws -> PaymentMethodSummary
    /// Makes a saved method the one holds are placed on.
    func makeDefaultPaymentMethod(id: String) async throws
    /// Forgets a saved method.
    func removePaymentMethod(id: String) async throws
    /// Pays what the account owes with the default method; retries with the same `idempotencyKey` pay at most once.
    func settleBalance(idempotencyKey: UUID) async throws -> AccountBalance
}
