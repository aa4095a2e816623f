/// What the store knows about one order.
public enum TrackingState: Equatable, Sendable {
    /// The store is following the repository but has no snapshot of this order yet.
    case loading
    /// The newest snapshot the status policy accepted.
    case loaded(OrderTracking)
    /// Never fetched: the store is not following the repository.
    case unavailable
}
