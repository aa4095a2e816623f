/// The road network as a graph over its directed edges: each node here is one directed road edge, each arc a turn
/// from one edge onto the next, so turn restrictions and turn costs are exact.
///
/// Weights are integer deciseconds. The arc `e → f` costs `e`'s travel time plus the delay of the via node plus
/// the turn's cost; its length is `e`'s length. A path over edges `e1 … ek` therefore costs the arcs between them
/// plus the last edge's own weight, which the query's target offset adds.
///
/// A turn from an open edge onto a destination-only one (`access=destination` and its kin) also carries
/// `destinationEntryWeight`, as OSRM's car profile weighs entering a restricted way: a route enters such streets
/// only where its start or end leaves no other way. That weight is no time, so a weight's seconds are taken
/// modulo it (`seconds(ofWeight:)`); no real route takes anywhere near the 27.8 hours it stands for.
public struct EdgeBasedGraph: Sendable {
    /// The weight (deciseconds) of a turn onto a destination-only edge from an open one, on top of its time.
    public static let destinationEntryWeight: Int = 1_000_000

    /// The travel time in seconds of a path's or a part's weight, less its destination-only entries.
    @inlinable public static func seconds(ofWeight weight: Int) -> Double {
        Double(weight % destinationEntryWeight) / 10
    }

    /// The number of edge-based nodes (the network's directed edges).
    public let nodeCount: Int
    /// Each edge's own weight in deciseconds (at least 1).
    public let edgeWeight: [Int32]
    /// Each edge's own length in metres.
    public let edgeLength: [Float]
    /// CSR offsets: the turns out of edge `e` are `firstArc[e]..<firstArc[e+1]`.
    public let firstArc: [Int32]
    /// Each turn's next edge.
    public let arcHead: [Int32]
    /// Each turn's weight in deciseconds.
    public let arcWeight: [Int32]
    /// Each turn's length in metres (the tail edge's length).
    public let arcLength: [Float]
    /// CSR offsets over network nodes into `nodeDepartures`.
    public let nodeFirstDeparture: [Int32]
    /// The edges leaving each network node.
    public let nodeDepartures: [Int32]
    /// CSR offsets over network nodes into `nodeArrivals`.
    public let nodeFirstArrival: [Int32]
    /// The edges arriving at each network node.
    public let nodeArrivals: [Int32]

    /// The number of turns.
    public var arcCount: Int { arcHead.count }

    /// Builds the turn graph: every pair of consecutive edges except self-loops and U-turns where other ways on
    /// exist, minus what the restrictions forbid.
    public init(network: RoadNetwork) {
        self.init(network: network, edgeDurations: network.edgeDurationSeconds)
    }

    /// The turn graph of `network` with `edgeDurations` (seconds, one per directed road edge) instead of the
    /// network's own durations: the same turns, restrictions and turn costs, other weights (live speeds).
    public init(network: RoadNetwork, edgeDurations: [Double]) {
        precondition(edgeDurations.count == network.edgeCount, "one duration per directed road edge")
        let edgeCount = network.edgeCount
        var outEdges = [[Int32]](repeating: [], count: network.nodeCount)
        for edge in 0..<edgeCount {
            outEdges[Int(network.edgeFrom[edge])].append(Int32(edge))
        }
        var forbidden = Set<Int64>()
        var onlyAllowed: [Int32: Set<Int32>] = [:]
        for restriction in network.restrictions {
            switch restriction.kind {
            case .no: forbidden.insert(Self.turnKey(restriction.fromEdge, restriction.toEdge))
            case .only: onlyAllowed[restriction.fromEdge, default: []].insert(restriction.toEdge)
            }
        }

        var edgeWeight = [Int32](repeating: 0, count: edgeCount)
        var edgeLength = [Float](repeating: 0, count: edgeCount)
        for edge in 0..<edgeCount {
            edgeWeight[edge] = Self.deciseconds(edgeDurations[edge], minimum: 1)
            edgeLength[edge] = Float(network.edgeLengthMeters[edge])
        }

        // Where a node has exactly two neighbouring nodes (a crossing or signal splitting a street, two ways joined
        // end to end) a car does not turn. `arrivingFrom` holds the neighbours a car can arrive from (two at most).
        var neighbours = [Set<Int32>](repeating: [], count: network.nodeCount)
        var arrivingFrom = [Set<Int32>](repeating: [], count: network.nodeCount)
        for edge in 0..<edgeCount {
            let from = network.edgeFrom[edge], to = network.edgeTo[edge]
            if neighbours[Int(from)].count <= 2 { neighbours[Int(from)].insert(to) }
            if neighbours[Int(to)].count <= 2 { neighbours[Int(to)].insert(from) }
            if arrivingFrom[Int(to)].count <= 1 { arrivingFrom[Int(to)].insert(from) }
        }
        var firstArc = [Int32](repeating: 0, count: edgeCount + 1)
        var arcHead: [Int32] = [], arcWeight: [Int32] = [], arcLength: [Float] = []
        arcHead.reserveCapacity(edgeCount * 3)
        arcWeight.reserveCapacity(edgeCount * 3)
        arcLength.reserveCapacity(edgeCount * 3)
        for edge in 0..<edgeCount {
            firstArc[edge] = Int32(arcHead.count)
            let via = Int(network.edgeTo[edge]), tail = network.edgeFrom[edge]
            let arriving = network.endBearing(ofEdge: Int32(edge))
            let only = onlyAllowed[Int32(edge)]
            let allowed = outEdges[via].filter { next in
                Int(next) != edge && (only?.contains(next) ?? true)
                    && !forbidden.contains(Self.turnKey(Int32(edge), next))
            }
            // A U-turn only where a car has nothing else to do (OSRM's car turns back nowhere else): at a dead
            // end, where turning back is the only way on, or where no other road leads in (around a one-way block).
            let mayTurnBack = neighbours[via].count == 1 || allowed.count == 1 || arrivingFrom[via].count <= 1
            for next in allowed {
                let isUTurn = network.edgeTo[Int(next)] == tail
                if isUTurn, !mayTurnBack { continue }
                var angle = network.startBearing(ofEdge: next) - arriving
                if angle > 180 { angle -= 360 } else if angle <= -180 { angle += 360 }
                // Where a street only bends (two neighbours: two ways meeting end to end, a signal mid-street) a
                // car does not turn, so the bend costs nothing (OSRM costs turns only where more than two roads meet).
                let bends = neighbours[via].count == 2 && !isUTurn
                let seconds =
                    network.nodeDelaySeconds[via]
                    + (bends ? 0 : network.turnCosts.seconds(angleDegrees: angle, isUTurn: isUTurn))
                let entry = network.edgeIsDestinationOnly[Int(next)] && !network.edgeIsDestinationOnly[edge]
                arcHead.append(next)
                arcWeight.append(
                    edgeWeight[edge] + Self.deciseconds(seconds, minimum: 0)
                        + (entry ? Int32(Self.destinationEntryWeight) : 0))
                arcLength.append(edgeLength[edge])
            }
        }
        firstArc[edgeCount] = Int32(arcHead.count)
        (nodeFirstDeparture, nodeDepartures) = Self.csr(network.edgeFrom, nodeCount: network.nodeCount)
        (nodeFirstArrival, nodeArrivals) = Self.csr(network.edgeTo, nodeCount: network.nodeCount)
        self.nodeCount = edgeCount
        self.edgeWeight = edgeWeight
        self.edgeLength = edgeLength
        self.firstArc = firstArc
        self.arcHead = arcHead
        self.arcWeight = arcWeight
        self.arcLength = arcLength
    }

    /// The same turns with each edge's travel time replaced by `edgeDurations` (seconds, one per directed road
    /// edge); each turn keeps its node delay and turn cost. Much cheaper than building from the network again.
    public func reweighted(edgeDurations: [Double]) -> EdgeBasedGraph {
        precondition(edgeDurations.count == nodeCount, "one duration per directed road edge")
        var newEdgeWeight = edgeWeight, newArcWeight = arcWeight
        for edge in 0..<nodeCount {
            let weight = Self.deciseconds(edgeDurations[edge], minimum: 1)
            let change = weight - edgeWeight[edge]
            newEdgeWeight[edge] = weight
            if change != 0 {
                for arc in Int(firstArc[edge])..<Int(firstArc[edge + 1]) { newArcWeight[arc] += change }
            }
        }
        return EdgeBasedGraph(
            nodeCount: nodeCount, edgeWeight: newEdgeWeight, edgeLength: edgeLength, firstArc: firstArc,
            arcHead: arcHead,
            arcWeight: newArcWeight, arcLength: arcLength, nodeFirstDeparture: nodeFirstDeparture,
            nodeDepartures: nodeDepartures, nodeFirstArrival: nodeFirstArrival, nodeArrivals: nodeArrivals)
    }

    /// A graph from its arrays (the graph file's reader; the arrays must be consistent).
    init(
        nodeCount: Int, edgeWeight: [Int32], edgeLength: [Float], firstArc: [Int32], arcHead: [Int32],
        arcWeight: [Int32],
        arcLength: [Float], nodeFirstDeparture: [Int32], nodeDepartures: [Int32], nodeFirstArrival: [Int32],
        nodeArrivals: [Int32]
    ) {
        self.nodeCount = nodeCount
        self.edgeWeight = edgeWeight
        self.edgeLength = edgeLength
        self.firstArc = firstArc
        self.arcHead = arcHead
        self.arcWeight = arcWeight
        self.arcLength = arcLength
        self.nodeFirstDeparture = nodeFirstDeparture
        self.nodeDepartures = nodeDepartures
        self.nodeFirstArrival = nodeFirstArrival
        self.nodeArrivals = nodeArrivals
    }

    /// A graph with the network's node CSRs and the given turn arrays (the graph file's reader).
    init(
        network: RoadNetwork, edgeWeight: [Int32], edgeLength: [Float], firstArc: [Int32], arcHead: [Int32],
        arcWeight: [Int32],
        arcLength: [Float]
    ) {
        let (firstDeparture, departures) = Self.csr(network.edgeFrom, nodeCount: network.nodeCount)
        let (firstArrival, arrivals) = Self.csr(network.edgeTo, nodeCount: network.nodeCount)
        self.init(
            nodeCount: network.edgeCount, edgeWeight: edgeWeight, edgeLength: edgeLength, firstArc: firstArc,
            arcHead: arcHead,
            arcWeight: arcWeight, arcLength: arcLength, nodeFirstDeparture: firstDeparture, nodeDepartures: departures,
            nodeFirstArrival: firstArrival, nodeArrivals: arrivals)
    }

    /// Seconds to whole deciseconds, rounded, at least `minimum`.
    static func deciseconds(_ seconds: Double, minimum: Int32) -> Int32 {
        max(minimum, Int32((seconds * 10).rounded()))
    }

    /// Groups edge indices by node: offsets and the edges in node order.
    private static func csr(_ nodeOfEdge: [Int32], nodeCount: Int) -> ([Int32], [Int32]) {
        var first = [Int32](repeating: 0, count: nodeCount + 1)
        for node in nodeOfEdge { first[Int(node) + 1] += 1 }
        for node in 0..<nodeCount { first[node + 1] += first[node] }
        var fill = first
        var edges = [Int32](repeating: 0, count: nodeOfEdge.count)
        for (edge, node) in nodeOfEdge.enumerated() {
            edges[Int(fill[Int(node)])] = Int32(edge)
            fill[Int(node)] += 1
        }
        return (first, edges)
    }

    private static func turnKey(_ from: Int32, _ to: Int32) -> Int64 {
        Int64(from) << 32 | Int64(UInt32(bitPattern: to))
    }
}
