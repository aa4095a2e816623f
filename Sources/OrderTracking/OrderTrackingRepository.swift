/// Domain: the store's promise.
public protocol OrderTrackingRepository: Sendable {
    /// Every snapshot fetched, for every order, in arrival order (not version order).
    /// Replays the latest per order on subscribe. One stream per caller.
    /// Finishes when the caller's task is cancelled.
    func snapshots() -> AsyncStream<OrderTracking>
}
