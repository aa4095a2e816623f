public import Foundation
public import EnRouteModels

/// Why a road query has no answer.
public enum RoadRoutingError: Error, Sendable, Equatable {
    /// The coordinate at this index (sources first, then destinations, for a table) is not near a routable road.
    case noSegment(index: Int)
    /// No road path joins the positions.
    case noRoute
    /// The engine could not answer (an external router down or too slow); the detail says what happened.
    case unavailable(String)
}

/// Where a coordinate lands on the road network.
public struct RoadWaypoint: Sendable, Equatable {
    /// The snapped point on the road.
    public var location: Coordinate
    /// The road's name ("" when unnamed).
    public var name: String
    /// Metres from the given coordinate to the snapped point.
    public var distanceMeters: Double
    /// The road's heading at the snapped point, degrees from north, in the direction of travel.
    public var bearing: Double

    /// A snapped point.
    public init(location: Coordinate, name: String, distanceMeters: Double, bearing: Double) {
        self.location = location; self.name = name; self.distanceMeters = distanceMeters; self.bearing = bearing
    }
}

/// A road route between two snapped points: what the product needs of it.
public struct RoadLeg: Sendable, Equatable {
    /// Metres along the road, snapped start to snapped end.
    public var distanceMeters: Double
    /// Seconds of driving at the speeds the engine used, turn costs and delays included.
    public var durationSeconds: Double
    /// The road's points from the snapped start to the snapped end.
    public var geometry: [Coordinate]
    /// The maneuvers, `depart` first and `arrive` last.
    public var steps: [RouteManeuver]
    /// Where the start landed.
    public var start: RoadWaypoint
    /// Where the end landed.
    public var end: RoadWaypoint

    /// A leg.
    public init(distanceMeters: Double, durationSeconds: Double, geometry: [Coordinate], steps: [RouteManeuver],
                start: RoadWaypoint, end: RoadWaypoint) {
        self.distanceMeters = distanceMeters; self.durationSeconds = durationSeconds; self.geometry = geometry
        self.steps = steps; self.start = start; self.end = end
    }
}

/// Seconds and metres of the fastest road path between two points.
public struct RoadCost: Sendable, Equatable {
    /// Seconds of driving.
    public var durationSeconds: Double
    /// Metres along the road.
    public var distanceMeters: Double

    /// A cost.
    public init(durationSeconds: Double, distanceMeters: Double) {
        self.durationSeconds = durationSeconds; self.distanceMeters = distanceMeters
    }
}

/// The road network as the product asks it: routes, tables and snapping, answered by EnRoute's own graph or by an
/// external router. `departure` is when the driving starts, for engines that know speeds by time of day.
public protocol RoadRouting: Sendable {
    /// The fastest route from `from` to `to`; `heading` (degrees from north) is the direction the driver faces at the start.
    func route(from: Coordinate, to: Coordinate, heading: Double?, departure: Date) async throws(RoadRoutingError) -> RoadLeg
    /// The cost from every source to every destination (`[source][destination]`), nil where no road joins them.
    func table(sources: [Coordinate], destinations: [Coordinate], departure: Date) async throws(RoadRoutingError) -> [[RoadCost?]]
    /// Where `coordinate` lands on the nearest routable road (heading-aware when one is given).
    func nearest(_ coordinate: Coordinate, heading: Double?) async throws(RoadRoutingError) -> RoadWaypoint
}

/// Hears providers' kept fixes, for engines that learn road speeds from them.
public protocol RoadSpeedFeedback: Sendable {
    /// Fixes a provider's device took (oldest first) that the server kept.
    func observe(provider: String, fixes: [LocationFix])
}
