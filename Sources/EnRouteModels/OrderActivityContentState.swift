/// A delivery's Live Activity content: the `content-state` of the ActivityKit push the server sends, and the state the
/// app writes when it updates the card itself. One type for both writers, so a push replaces it field for field.
public struct OrderActivityContentState: Codable, Hashable, Sendable {
    /// The card's status.
    public var status: OrderStatusWire
    /// The latest arrival time, in Unix seconds; nil once the order ends or while no estimate exists.
    public var etaLatest: Int?
    /// Stops the courier makes for other orders before this one ("1 stop before yours"); nil when none is planned.
    public var stopsBefore: Int?

    /// A state with every field given.
    public init(status: OrderStatusWire, etaLatest: Int?, stopsBefore: Int? = nil) {
        self.status = status
        self.etaLatest = etaLatest
        self.stopsBefore = stopsBefore
    }
}
