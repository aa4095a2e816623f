/// One position report to be matched: where, and when on the caller's clock.
public struct MatchFix: Sendable, Hashable {
    /// The reported position.
    public var coordinate: RoadCoordinate
    /// Seconds on the caller's clock (any epoch, ascending along a path).
    public var time: Double

    /// A fix at `coordinate` taken at `time` seconds.
    public init(coordinate: RoadCoordinate, time: Double) {
        self.coordinate = coordinate
        self.time = time
    }
}

/// One directed edge driven from end to end within a matched segment, with the times it was entered and left.
public struct EdgeTraversal: Sendable, Hashable {
    /// The directed edge.
    public var edge: Int32
    /// When the vehicle reached the edge's tail node, interpolated between fixes by distance.
    public var enteredAt: Double
    /// When it reached the edge's head node.
    public var leftAt: Double

    /// A traversal of `edge` from `enteredAt` to `leftAt`.
    public init(edge: Int32, enteredAt: Double, leftAt: Double) {
        self.edge = edge
        self.enteredAt = enteredAt
        self.leftAt = leftAt
    }

    /// Seconds spent on the edge.
    public var seconds: Double { leftAt - enteredAt }
}

/// A run of fixes matched onto one connected path.
public struct MatchedSegment: Sendable, Equatable {
    /// The input index of the segment's first matched fix.
    public var firstFix: Int
    /// The input index of its last matched fix.
    public var lastFix: Int
    /// The directed edges driven, in order (an edge may recur when the path comes back to it).
    public var edges: [Int32]
    /// The matched path's points, from the first snapped position to the last.
    public var geometry: [RoadCoordinate]
    /// Metres along the path from the first snapped position to the last.
    public var distanceMeters: Double
    /// Seconds to drive the path at the graph's weights (free-flow, turn costs and node delays included).
    public var durationSeconds: Double
    /// The edges driven end to end (all but the partial first and last), with interpolated times.
    public var traversals: [EdgeTraversal]
}

/// Where and why a path of fixes could not be matched as one connected drive.
public struct MatchBreak: Sendable, Hashable {
    /// Why the matcher split the path.
    public enum Reason: Sendable, Hashable {
        /// A fix had no road within the search radius.
        case noCandidates
        /// Consecutive fixes were further apart in time or space than the matcher bridges.
        case gap
        /// No road route within the detour bound joins any candidate of one fix to any of the next.
        case noRoute
    }

    /// The last fix matched before the break (nil when nothing was matched before it).
    public var lastFixBefore: Int?
    /// The first fix matched after the break (nil when nothing was matched after it).
    public var firstFixAfter: Int?
    /// Why the path broke here.
    public var reason: Reason

    /// A break between two fixes, for `reason`.
    public init(lastFixBefore: Int?, firstFixAfter: Int?, reason: Reason) {
        self.lastFixBefore = lastFixBefore
        self.firstFixAfter = firstFixAfter
        self.reason = reason
    }
}

/// The result of matching a path of fixes onto the road network.
public struct MapMatch: Sendable, Equatable {
    /// The connected matched runs, in order; more than one when the path broke.
    public var segments: [MatchedSegment]
    /// Every place the path broke, in order.
    public var breaks: [MatchBreak]
    /// Each input fix's position on the matched road, nil where it could not be matched.
    public var snapped: [EdgeSnap?]

    /// True when the whole path matched as one connected drive.
    public var isBroken: Bool { !breaks.isEmpty }
    /// Metres driven over all segments (gaps between segments are not counted).
    public var distanceMeters: Double { segments.reduce(0) { $0 + $1.distanceMeters } }
    /// Free-flow seconds over all segments.
    public var durationSeconds: Double { segments.reduce(0) { $0 + $1.durationSeconds } }
    /// Every segment's edges, in order.
    public var edges: [Int32] { segments.flatMap(\.edges) }
    /// Every segment's fully driven edges with their times.
    public var traversals: [EdgeTraversal] { segments.flatMap(\.traversals) }
}
