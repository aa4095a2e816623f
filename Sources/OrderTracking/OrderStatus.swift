/// Where an order stands, as the customer is told.
public enum OrderStatus: Equatable, Sendable {
    case placed, picking, onTheWay, arriving
    /// terminal
    case delivered, cancelled(reason: String)
    /// "Rider delayed": not terminal, the server moves it on
    case problem(message: String)

    /// True for delivered and cancelled: the order never reopens.
    public var isTerminal: Bool {
        switch self {
        case .delivered, .cancelled: true
        case .placed, .picking, .onTheWay, .arriving, .problem: false
        }
    }

    /// The step this status marks on the screen; nil for cancelled and problem, which carry no stage.
    public var step: OrderStep? {
        switch self {
        case .placed: .placed
        case .picking: .picking
        case .onTheWay: .onTheWay
        case .arriving: .arriving
        case .delivered: .delivered
        case .cancelled, .problem: nil
        }
    }
}
