/// The state machine: should an incoming snapshot replace the one we have?
public struct OrderStatusPolicy: Sendable {
    public init() {}

    /// false if not newer by version, or if current is terminal.
    /// A newer version may move a stage back (a new rider): the server's truth.
    public func shouldReplace(_ current: OrderTracking?, with incoming: OrderTracking) -> Bool {
        guard let current else { return true }
        guard current.orderID == incoming.orderID, !current.status.isTerminal else { return false }
        return incoming.version > current.version
    }
}
