public import EnRouteModels

/// A path of waypoints driven at a steady speed: where the car is after a distance (for `enroute drive` and tests).
public struct ScriptedRoute: Sendable, Equatable {
    /// The waypoints, in order.
    public let waypoints: [Coordinate]
    private let cumulative: [Double]

    /// A route through `waypoints` (at least one).
    public init(_ waypoints: [Coordinate]) {
        precondition(!waypoints.isEmpty, "a route needs a waypoint")
        self.waypoints = waypoints
        var sums = [0.0]
        for (a, b) in zip(waypoints, waypoints.dropFirst()) { sums.append(sums[sums.count - 1] + a.distance(to: b)) }
        cumulative = sums
    }

    /// The route's length in metres.
    public var length: Double { cumulative[cumulative.count - 1] }

    /// The position and heading (degrees) `metres` along the route, clamped to its ends.
    public func position(atDistance metres: Double) -> (coordinate: Coordinate, heading: Double) {
        guard waypoints.count > 1 else { return (waypoints[0], 0) }
        let d = min(max(0, metres), length)
        var i = 1
        while i < cumulative.count - 1, cumulative[i] < d { i += 1 }
        let a = waypoints[i - 1], b = waypoints[i]
        let legLength = cumulative[i] - cumulative[i - 1]
        let fraction = legLength > 0 ? (d - cumulative[i - 1]) / legLength : 1
        return (a.interpolated(to: b, fraction: fraction), a.bearing(to: b))
    }

    /// Parses `LAT,LNG;LAT,LNG;...`; nil when any point is malformed or out of range.
    public static func parse(_ text: String) -> [Coordinate]? {
        var points: [Coordinate] = []
        for pair in text.split(separator: ";") {
            let parts = pair.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            guard parts.count == 2, let lat = Double(parts[0]), let lng = Double(parts[1]) else { return nil }
            let point = Coordinate(lat: lat, lng: lng)
            guard point.isValid else { return nil }
            points.append(point)
        }
        return points.isEmpty ? nil : points
    }
}
