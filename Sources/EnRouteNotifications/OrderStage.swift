/// The order moments a customer is told about, with the generic copy that is always true.
public enum OrderStage: String, Codable, Sendable, CaseIterable {
    case picking, onTheWay, arriving, delivered, problem

    /// The alert's title.
    public var title: String {
        switch self {
        case .picking: "Picking your order"
        case .onTheWay: "On the way"
        case .arriving: "Almost there"
        case .delivered: "Delivered"
        case .problem: "About your order"
        }
    }

    /// The alert's body: generic, because it shows whenever the service extension cannot do better.
    public var genericBody: String {
        switch self {
        case .picking: "We're picking your order"
        case .onTheWay: "Your order is on the way"
        case .arriving: "Your rider is almost there"
        case .delivered: "Your order was delivered"
        case .problem: "There's a problem with your order. Tap to see it."
        }
    }

    /// 10 when the customer should see it now, 5 otherwise.
    public var priority: Int { self == .picking ? 5 : 10 }

    /// Only "rider arriving" breaks through Focus.
    public var isTimeSensitive: Bool { self == .arriving }

    /// True when the rider is part of the moment, so her name and photo travel with it.
    public var namesRider: Bool { self == .onTheWay || self == .arriving || self == .delivered }
}
