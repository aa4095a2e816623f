public import EnRouteModels

/// What the merchant's order screen needs from the server.
public protocol MerchantOrdersAPI: Sendable {
    /// The merchant's unfinished orders.
    func orders() async throws -> [TripSnapshot]
    /// Accepts an order with a preparation time; throws `TripConflict` when refused.
    func accept(orderId: String, preparationMinutes: Int, idempotencyKey: String) async throws -> TripSnapshot
    /// Marks an order ready for pickup; throws `TripConflict` when refused.
    func markReady(orderId: String, idempotencyKey: String) async throws -> TripSnapshot
}
