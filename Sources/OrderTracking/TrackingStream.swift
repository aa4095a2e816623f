/// Data-internal: card 8's promise, every snapshot as it arrives.
public protocol TrackingStream: Sendable {
    /// Every snapshot fetched, for every order, in arrival order; replays the latest per order on subscribe.
    /// Finishes when the caller's task is cancelled.
    func snapshots() -> AsyncStream<OrderTracking>
}
