/// The matcher's transitions: the shortest driving distance from one snapped position to several others, by a
/// Dijkstra on the turn graph (so one-ways and turn restrictions hold) keyed by metres and bounded.
///
/// Not thread-safe: its search state is allocated once per match and reused for every transition.
final class MatchRouteSearch {
    /// A route from the source position to one target: metres, the U-turn penalty it carries, and the edges from
    /// the source's to the target's.
    struct Route {
        var meters: Double
        var penaltyMeters: Double
        var edges: [Int32]
    }

    private let network: RoadNetwork
    private let graph: EdgeBasedGraph
    private var heap: MinHeap
    /// Millimetres from the source position to each edge's tail node, penalties included (the search's key).
    private var distance: [Int]
    /// Millimetres driven to each edge's tail node, penalties excluded.
    private var driven: [Int]
    private let uTurnPenalty: Int
    private let turnPenaltyPerDegree: Double
    private var parent: [Int32]
    private var stamp: [UInt32]
    private var epoch: UInt32 = 0

    /// A search over `graph` that adds to the key `uTurnPenaltyMeters` for every U-turn at a node and
    /// `turnPenaltyMeters` × angle / 180° for every other turn.
    init(network: RoadNetwork, graph: EdgeBasedGraph, uTurnPenaltyMeters: Double, turnPenaltyMeters: Double) {
        self.network = network
        self.graph = graph
        uTurnPenalty = Self.millimetres(uTurnPenaltyMeters)
        turnPenaltyPerDegree = turnPenaltyMeters * 1000 / 180
        heap = MinHeap(capacity: graph.nodeCount)
        distance = [Int](repeating: 0, count: graph.nodeCount)
        driven = [Int](repeating: 0, count: graph.nodeCount)
        parent = [Int32](repeating: -1, count: graph.nodeCount)
        stamp = [UInt32](repeating: 0, count: graph.nodeCount)
    }

    /// Routes from `source` to each of `targets` no longer than `boundMeters`, nil where none is. A target on the
    /// source's edge less than `backtrackMeters` behind it counts as not having moved (GPS noise along the road).
    func routes(from source: EdgeSnap, to targets: [EdgeSnap], boundMeters: Double, backtrackMeters: Double) -> [Route?]
    {
        var result = [Route?](repeating: nil, count: targets.count)
        // Targets still to reach through the graph, by edge.
        var pending: [Int32: [Int]] = [:]
        for (index, target) in targets.enumerated() {
            if target.edge == source.edge, target.metersAlongEdge >= source.metersAlongEdge - backtrackMeters {
                let meters = max(0, target.metersAlongEdge - source.metersAlongEdge)
                if meters <= boundMeters {
                    result[index] = Route(meters: meters, penaltyMeters: 0, edges: [source.edge])
                }
            } else {
                pending[target.edge, default: []].append(index)
            }
        }
        guard !pending.isEmpty else { return result }

        epoch &+= 1
        heap.clear()
        let bound = Self.millimetres(boundMeters)
        let sourceEdge = Int(source.edge)
        let remaining = Self.millimetres(max(0, network.edgeLengthMeters[sourceEdge] - source.metersAlongEdge))
        for arc in Int(graph.firstArc[sourceEdge])..<Int(graph.firstArc[sourceEdge + 1]) {
            let next = graph.arcHead[arc]
            reach(next, remaining + penalty(from: source.edge, to: next), driven: remaining, from: -1)
        }
        var unresolved = pending.count
        // The bound is on metres driven; keys carry penalties on top, so the heap may hold keys above it.
        while !heap.isEmpty, unresolved > 0 {
            let (node, key) = heap.popMin()
            if let waiting = pending.removeValue(forKey: node) {
                unresolved -= 1
                let edges = path(to: node, from: source.edge)
                for index in waiting {
                    let meters = Double(driven[Int(node)]) / 1000 + targets[index].metersAlongEdge
                    let penalty = Double(key - driven[Int(node)]) / 1000
                    if meters <= boundMeters {
                        result[index] = Route(meters: meters, penaltyMeters: penalty, edges: edges)
                    }
                }
            }
            let here = Int(node)
            let length = Self.millimetres(network.edgeLengthMeters[here])
            guard driven[here] + length <= bound else { continue }
            for arc in Int(graph.firstArc[here])..<Int(graph.firstArc[here + 1]) {
                let next = graph.arcHead[arc]
                reach(next, key + length + penalty(from: node, to: next), driven: driven[here] + length, from: node)
            }
        }
        return result
    }

    private func path(to node: Int32, from source: Int32) -> [Int32] {
        var edges: [Int32] = []
        var at = node
        while at >= 0 {
            edges.append(at)
            at = parent[Int(at)]
        }
        edges.append(source)
        return edges.reversed()
    }

    /// The penalty in millimetres for turning from `from` onto `to` (a U-turn goes back to the node it came from).
    private func penalty(from: Int32, to: Int32) -> Int {
        if network.edgeTo[Int(to)] == network.edgeFrom[Int(from)] { return uTurnPenalty }
        return Int(
            turnPenaltyPerDegree
                * EdgeSnapper.angleBetween(network.endBearing(ofEdge: from), network.startBearing(ofEdge: to)))
    }

    private func reach(_ node: Int32, _ key: Int, driven meters: Int, from previous: Int32) {
        let index = Int(node)
        if stamp[index] == epoch, distance[index] <= key { return }
        stamp[index] = epoch
        distance[index] = key
        driven[index] = meters
        parent[index] = previous
        heap.pushOrDecrease(node, key: key)
    }

    private static func millimetres(_ meters: Double) -> Int { Int((meters * 1000).rounded()) }
}
