import Foundation

/// One maneuver of a route and the driving up to the next one, in OSRM's vocabulary.
public struct RouteManeuver: Codable, Sendable, Equatable {
    /// What the driver does: `depart`, `turn`, `new name`, `continue`, `roundabout`, `exit roundabout`, `arrive`.
    public var type: String
    /// Its direction (`left`, `slight right`, `uturn`…); nil for `depart` and `arrive`.
    public var modifier: String?
    /// The street driven after the maneuver ("" when unnamed).
    public var name: String
    /// Metres from this maneuver to the next.
    public var distanceMeters: Double
    /// Seconds from this maneuver to the next.
    public var durationSeconds: Double
    /// Where the maneuver happens.
    public var location: Coordinate
    /// The heading before the maneuver, whole degrees from north.
    public var bearingBefore: Int
    /// The heading after the maneuver, whole degrees from north.
    public var bearingAfter: Int
    /// For `roundabout`: which exit to take (1 is the first); absent otherwise.
    public var exit: Int?

    /// A maneuver.
    public init(
        type: String, modifier: String?, name: String, distanceMeters: Double, durationSeconds: Double,
        location: Coordinate, bearingBefore: Int, bearingAfter: Int, exit: Int? = nil
    ) {
        self.type = type; self.modifier = modifier; self.name = name
        self.distanceMeters = distanceMeters; self.durationSeconds = durationSeconds
        self.location = location; self.bearingBefore = bearingBefore; self.bearingAfter = bearingAfter; self.exit = exit
    }
}
