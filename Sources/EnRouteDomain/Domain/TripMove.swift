public import EnRouteModels

/// A change a party asks the backend to make to a trip.
public enum TripMove: Sendable, Equatable, Hashable {
    /// A provider takes the trip (a ride becomes driverAssigned; a delivery gets its courier).
    case assignProvider(String)
    /// A ride step to a target state (driverArrived, onTrip, completed).
    case ride(TripState)
    /// A delivery step to a target status (onTheWay, arriving, delivered).
    case delivery(DeliveryStatus)
    /// Give up: the trip ends, or, when a provider gives up before pickup, it goes back to matching.
    case cancel(reason: String)
    /// The backend found nobody: a ride ends in noDriversFound.
    case noProviderFound
    /// The merchant accepts the order and states how long preparing takes.
    case merchantAccept(preparationMinutes: Int)
    /// The merchant has the goods ready for the courier.
    case merchantReady
    /// A non-terminal problem shown over the status ("Rider delayed").
    case reportProblem(String)
    /// The problem is over.
    case clearProblem
}

/// Why a move was refused; the caller is shown the real trip beside it.
public struct MoveRefusal: Error, Sendable, Equatable {
    public let reason: String
    public init(_ reason: String) { self.reason = reason }
}
