public import EnRouteModels

/// A step the provider reports, in the trip's own vocabulary.
public enum ProviderStep: String, Codable, Sendable, CaseIterable {
    /// Rides: at the pickup point.
    case driverArrived
    /// Rides: the customer is on board.
    case onTrip
    /// Rides: dropped off.
    case completed
    /// Deliveries: picked up at the merchant and on the way.
    case onTheWay
    /// Deliveries: almost at the door.
    case arriving
    /// Deliveries: handed over.
    case delivered
    /// Either kind: the provider gives the trip up.
    case cancelled

    /// The status the provider's screen shows once this step is reported (the trip's status after it applies).
    public var resultingStatus: String { rawValue }

    /// The next forward step for `trip` as it stands, or nil when there is none (finished, or waiting on someone else).
    public static func next(after trip: TripSnapshot) -> ProviderStep? {
        next(afterStatus: trip.status, kind: trip.kind, merchantStep: trip.merchantStep)
    }

    /// The next forward step from `status` for a trip of `kind` ("ride" or "delivery").
    public static func next(afterStatus status: String, kind: String, merchantStep: String? = nil) -> ProviderStep? {
        switch (kind, status) {
        case ("ride", "driverAssigned"): .driverArrived
        case ("ride", "driverArrived"): .onTrip
        case ("ride", "onTrip"): .completed
        case ("delivery", "picking") where merchantStep == "ready": .onTheWay
        case ("delivery", "onTheWay"): .arriving
        case ("delivery", "arriving"): .delivered
        default: nil
        }
    }

    /// True for statuses after which the trip never moves again.
    public static func isFinished(_ status: String) -> Bool {
        ["completed", "cancelled", "noDriversFound", "delivered"].contains(status)
    }
}
