/// One of the five steps the tracking screen lists, in order.
public enum OrderStep: Int, CaseIterable, Comparable, Sendable {
    case placed, picking, onTheWay, arriving, delivered

    /// The step's label on screen.
    public var title: String {
        switch self {
        case .placed: "Order placed"
        case .picking: "Picking your items"
        case .onTheWay: "On the way"
        case .arriving: "Arriving"
        case .delivered: "Delivered"
        }
    }

    public static func < (lhs: OrderStep, rhs: OrderStep) -> Bool { lhs.rawValue < rhs.rawValue }
}
