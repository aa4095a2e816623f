/// A route between two snapped coordinates: totals, the geometry from the snapped start to the snapped end, and
/// one step per maneuver.
public struct RoadRoute: Sendable, Equatable {
    /// Metres driven, from the snapped start to the snapped end (the geometry's length).
    public var distanceMeters: Double
    /// Seconds of travel, turn costs and node delays included (the weight).
    public var durationSeconds: Double
    /// The weight in deciseconds that the router minimised.
    public var weight: Int
    /// The path's points, from the snapped start to the snapped end.
    public var geometry: [RoadCoordinate]
    /// The maneuvers, `depart` first and `arrive` last.
    public var steps: [RouteStep]
    /// Where the start coordinate snapped (the edge the route leaves on).
    public var start: EdgeSnap
    /// Where the end coordinate snapped (the edge the route arrives on).
    public var end: EdgeSnap
    /// The directed edges driven, in order.
    public var edges: [Int32]
    /// The road class (the network's raw value) the route spends the most time on.
    public var mainRoadClass: UInt8 = 0
}

/// One maneuver and the driving up to the next one.
public struct RouteStep: Sendable, Equatable {
    /// What the driver does at the start of the step (OSRM's maneuver types, by the same strings).
    public enum ManeuverType: String, Sendable, Hashable {
        /// Leave the start.
        case depart
        /// Turn onto another street.
        case turn
        /// The street's name changes with no real turn.
        case newName = "new name"
        /// Stay on the same street through a turn or a U-turn.
        case `continue`
        /// Enter a roundabout; `exit` says which exit the step leaves by.
        case roundabout
        /// Leave a roundabout onto the next street.
        case exitRoundabout = "exit roundabout"
        /// Reach the destination.
        case arrive
    }

    /// The direction of the maneuver (OSRM's modifiers, by the same strings).
    public enum Modifier: String, Sendable, Hashable {
        /// Turn back the way you came.
        case uturn
        /// A turn of 140° to 170° to the right.
        case sharpRight = "sharp right"
        /// A turn of 60° to 140° to the right.
        case right
        /// A turn of 20° to 60° to the right.
        case slightRight = "slight right"
        /// Less than 20° either way.
        case straight
        /// A turn of 20° to 60° to the left.
        case slightLeft = "slight left"
        /// A turn of 60° to 140° to the left.
        case left
        /// A turn of 140° to 170° to the left.
        case sharpLeft = "sharp left"

        /// The modifier for a change of heading in degrees (positive to the right, in (-180, 180]).
        public init(turnAngle angle: Double) {
            let magnitude = abs(angle)
            switch magnitude {
            case ..<20: self = .straight
            case ..<60: self = angle > 0 ? .slightRight : .slightLeft
            case ..<140: self = angle > 0 ? .right : .left
            case ..<170: self = angle > 0 ? .sharpRight : .sharpLeft
            default: self = .uturn
            }
        }
    }

    /// The maneuver at the step's start.
    public var type: ManeuverType
    /// Its direction; nil for `depart` and `arrive`.
    public var modifier: Modifier?
    /// The street driven in this step ("" when unnamed).
    public var name: String
    /// Metres driven in this step.
    public var distanceMeters: Double
    /// Seconds of this step, the turn costs and delays at its end included.
    public var durationSeconds: Double
    /// Where the maneuver happens.
    public var location: RoadCoordinate
    /// The heading before the maneuver, degrees from north (0 for `depart`).
    public var bearingBefore: Double
    /// The heading after the maneuver, degrees from north (0 for `arrive`).
    public var bearingAfter: Double
    /// The step's points, from the maneuver to the next one.
    public var geometry: [RoadCoordinate]
    /// For `roundabout`: the exit taken, counting the exits passed (1 is the first); nil otherwise and when the
    /// route ends on the roundabout.
    public var exit: Int? = nil
}

/// Why a route or table could not be made, in OSRM's terms.
public enum RouteError: Error, Sendable, Equatable {
    /// The coordinate at this index (sources first, then destinations, for a table) is not near any road.
    case noSegment(index: Int)
    /// No route connects the snapped positions.
    case noRoute
}
