/// Plain Dijkstra on the edge-based graph: the reference the contraction hierarchy is checked against.
///
/// Not thread-safe: one router per thread; its search state is allocated once and reused.
public final class DijkstraRouter {
    private let graph: EdgeBasedGraph
    private var heap: MinHeap
    private var distance: [Int]
    private var length: [Double]
    private var parent: [Int32]
    private var stamp: [UInt32]
    private var targetStamp: [UInt32]
    private var targetOffset: [Int]
    private var targetLength: [Double]
    private var epoch: UInt32 = 0

    /// A router over `graph`.
    public init(graph: EdgeBasedGraph) {
        self.graph = graph
        let count = graph.nodeCount
        heap = MinHeap(capacity: count)
        distance = [Int](repeating: 0, count: count)
        length = [Double](repeating: 0, count: count)
        parent = [Int32](repeating: -1, count: count)
        stamp = [UInt32](repeating: 0, count: count)
        targetStamp = [UInt32](repeating: 0, count: count)
        targetOffset = [Int](repeating: 0, count: count)
        targetLength = [Double](repeating: 0, count: count)
    }

    /// The shortest route from any source to any target, or nil when none is reachable.
    public func route(from sources: [RouteEndpoint], to targets: [RouteEndpoint]) -> RoadPath? {
        epoch &+= 1
        heap.clear()
        for target in targets {
            let edge = Int(target.edge)
            if targetStamp[edge] != epoch || Int(target.weightOffset) < targetOffset[edge] {
                targetStamp[edge] = epoch
                targetOffset[edge] = Int(target.weightOffset)
                targetLength[edge] = target.lengthOffset
            }
        }
        for source in sources { reach(source.edge, Int(source.weightOffset), source.lengthOffset, from: -1) }

        var best = Int.max, bestEdge: Int32 = -1
        while !heap.isEmpty, heap.minKey < best {
            let (node, key) = heap.popMin()
            let here = Int(node)
            if targetStamp[here] == epoch, key + targetOffset[here] < best {
                best = key + targetOffset[here]
                bestEdge = node
            }
            for arc in Int(graph.firstArc[here])..<Int(graph.firstArc[here + 1]) {
                reach(
                    graph.arcHead[arc], key + Int(graph.arcWeight[arc]), length[here] + Double(graph.arcLength[arc]),
                    from: node)
            }
        }
        guard bestEdge >= 0 else { return nil }
        var edges: [Int32] = []
        var at = bestEdge
        while at >= 0 {
            edges.append(at)
            at = parent[Int(at)]
        }
        return RoadPath(
            edges: edges.reversed(), weight: best,
            distanceMeters: length[Int(bestEdge)] + targetLength[Int(bestEdge)])
    }

    /// The shortest route between two network nodes, or nil when none exists.
    public func route(fromNode source: Int32, toNode target: Int32) -> RoadPath? {
        route(from: graph.sources(atNode: source), to: graph.targets(atNode: target))
    }

    private func reach(_ node: Int32, _ key: Int, _ meters: Double, from previous: Int32) {
        let index = Int(node)
        if stamp[index] == epoch, distance[index] <= key { return }
        stamp[index] = epoch
        distance[index] = key
        length[index] = meters
        parent[index] = previous
        heap.pushOrDecrease(node, key: key)
    }
}
