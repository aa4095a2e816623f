/// Data-internal: card 7's promise. Each call publishes what it fetched to the snapshot streams too.
public protocol TrackingRefresher: Sendable {
    /// Fetches every active order. Throws on failure; cancelling cancels the request.
    @discardableResult func refreshActive() async throws -> [OrderTracking]
    /// Fetches one order. Throws on failure; cancelling cancels the request.
    @discardableResult func refresh(_ order: OrderID) async throws -> OrderTracking
}
