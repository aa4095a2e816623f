public import EnRouteModels

/// The ride the tracking screen follows.
public struct Ride: Sendable, Equatable, Identifiable {
    /// The trip's id.
    public let id: String
    /// The driver's first name, as the headline shows it.
    public let driverName: String
    /// The car model.
    public let car: String
    /// Where the driver picks the rider up.
    public let pickup: Coordinate

    /// A ride with the seed's fields.
    public init(id: String, driverName: String, car: String, pickup: Coordinate) {
        self.id = id; self.driverName = driverName; self.car = car; self.pickup = pickup
    }

    /// The ride for a server trip; placeholders until a driver is assigned.
    public init(trip: Trip) {
        self.init(
            id: trip.id, driverName: trip.driver?.name ?? "Your driver", car: trip.driver?.carModel ?? "",
            pickup: trip.pickup)
    }
}
