/// One end of a query: an edge of the edge-based graph and what starting or ending on it adds.
///
/// A source's offsets are added before its first turn (0 when the route starts at the edge's tail node; minus the
/// part already driven when it starts part-way along). A target's offsets are added after arriving on it (the
/// edge's whole weight when the route ends at its head node); they must not be negative.
public struct RouteEndpoint: Sendable, Hashable {
    /// The directed edge.
    public var edge: Int32
    /// Deciseconds added to every route through this end.
    public var weightOffset: Int32
    /// Metres added to every route through this end.
    public var lengthOffset: Double

    /// An endpoint on `edge` with the given offsets.
    public init(edge: Int32, weightOffset: Int32, lengthOffset: Double) {
        self.edge = edge
        self.weightOffset = weightOffset
        self.lengthOffset = lengthOffset
    }
}

/// A shortest-time route: the original directed edges it drives, in order, with its weight, time and length.
public struct RoadPath: Sendable, Equatable {
    /// The directed edges from the first to the last.
    public var edges: [Int32]
    /// The total weight in deciseconds.
    public var weight: Int
    /// The total distance in metres.
    public var distanceMeters: Double

    /// The total travel time in seconds (the weight, which is time, less any destination-only entry).
    public var durationSeconds: Double { EdgeBasedGraph.seconds(ofWeight: weight) }
}

/// Durations and distances from each source to each target; `nil` where a target cannot be reached.
public struct RouteTable: Sendable, Equatable {
    /// The number of sources (rows).
    public let sourceCount: Int
    /// The number of targets (columns).
    public let targetCount: Int
    /// Weights in deciseconds, row-major, `Int.max` when unreachable.
    public var weights: [Int]
    /// Distances in metres, row-major.
    public var distances: [Double]

    /// The weight in deciseconds from source `row` to target `column`, or nil when unreachable.
    public func weight(_ row: Int, _ column: Int) -> Int? {
        let value = weights[row * targetCount + column]
        return value == Int.max ? nil : value
    }

    /// The travel time in seconds from source `row` to target `column`, or nil when unreachable.
    public func durationSeconds(_ row: Int, _ column: Int) -> Double? {
        weight(row, column).map { EdgeBasedGraph.seconds(ofWeight: $0) }
    }

    /// The distance in metres from source `row` to target `column`, or nil when unreachable.
    public func distanceMeters(_ row: Int, _ column: Int) -> Double? {
        weight(row, column) == nil ? nil : distances[row * targetCount + column]
    }
}

extension EdgeBasedGraph {
    /// The sources of a route that starts at a network node: every edge leaving it, from its tail.
    public func sources(atNode node: Int32) -> [RouteEndpoint] {
        (Int(nodeFirstDeparture[Int(node)])..<Int(nodeFirstDeparture[Int(node) + 1])).map {
            RouteEndpoint(edge: nodeDepartures[$0], weightOffset: 0, lengthOffset: 0)
        }
    }

    /// The targets of a route that ends at a network node: every edge arriving at it, driven to its head.
    public func targets(atNode node: Int32) -> [RouteEndpoint] {
        (Int(nodeFirstArrival[Int(node)])..<Int(nodeFirstArrival[Int(node) + 1])).map {
            let edge = nodeArrivals[$0]
            return RouteEndpoint(
                edge: edge, weightOffset: edgeWeight[Int(edge)], lengthOffset: Double(edgeLength[Int(edge)]))
        }
    }
}
