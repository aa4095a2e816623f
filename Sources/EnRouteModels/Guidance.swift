public import Foundation

/// The stop a provider's route leads to: the pickup (a ride's pickup point, a delivery's merchant), then the drop-off.
public enum RouteStop: String, Codable, Sendable, Equatable, Hashable {
    case pickup, dropoff
}

/// One stop of a courier's planned route over the orders it carries: collecting one at its merchant, or handing it
/// over.
public struct PlannedStop: Codable, Sendable, Equatable, Hashable {
    /// The order the stop is for.
    public let tripId: String
    public let stop: RouteStop
    /// Where the stop is: the order's pickup or drop-off.
    public let at: Coordinate
    /// Road seconds from the stop before it (from the courier's position, for the first), as planned.
    public let secondsFromPrevious: Double

    public init(tripId: String, stop: RouteStop, at: Coordinate, secondsFromPrevious: Double) {
        self.tripId = tripId; self.stop = stop; self.at = at; self.secondsFromPrevious = secondsFromPrevious
    }
}

/// `GET /v1/provider/trips/{id}/route`: the road route from the provider's position to the trip's next stop, with its
/// maneuvers (guided to the pickup point, then to the destination).
public struct ProviderRoute: Codable, Sendable, Equatable {
    /// The trip the route is for.
    public var tripId: String
    /// Which stop the route leads to.
    public var stop: RouteStop
    /// The position the route starts from (the provider's latest fix, or the `from` the request gave).
    public var from: Coordinate
    /// The stop's position.
    public var to: Coordinate
    /// Metres along the road from the snapped start to the snapped stop.
    public var distanceMeters: Double
    /// Seconds of driving at the speeds the server uses now.
    public var durationSeconds: Double
    /// The route's geometry, an encoded polyline of precision 6 (`Polyline.decode`).
    public var polyline: String
    /// The maneuvers, `depart` first and `arrive` last.
    public var steps: [RouteManeuver]
    /// When the server computed the route.
    public var computedAt: Date

    /// A route.
    public init(
        tripId: String, stop: RouteStop, from: Coordinate, to: Coordinate, distanceMeters: Double,
        durationSeconds: Double, polyline: String, steps: [RouteManeuver], computedAt: Date
    ) {
        self.tripId = tripId; self.stop = stop; self.from = from; self.to = to
        self.distanceMeters = distanceMeters; self.durationSeconds = durationSeconds
        self.polyline = polyline; self.steps = steps; self.computedAt = computedAt
    }

    /// The geometry's points, decoded from `polyline` (empty when it is not a polyline).
    public var geometry: [Coordinate] { (try? Polyline.decode(polyline, precision: 6)) ?? [] }
}
