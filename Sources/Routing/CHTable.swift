/// Many-to-many travel times on a contraction hierarchy by buckets: one complete upward search back from each
/// target leaves (target, distance) in a bucket at every node it settles; one complete upward search from each
/// source scans the buckets of the nodes it settles.
///
/// Not thread-safe: one table object per thread; its search state is reused.
public final class CHTable {
    private let hierarchy: ContractionHierarchy
    private let side: SearchSide
    private var settled: [Int32] = []
    private var epoch: UInt32 = 0

    /// A table builder over `hierarchy`.
    public init(hierarchy: ContractionHierarchy) {
        self.hierarchy = hierarchy
        side = SearchSide(capacity: hierarchy.nodeCount)
    }

    deinit { side.deallocate() }

    /// The weights and distances from each source to each target; each source and target is a set of endpoints
    /// (a network node's departing or arriving edges, or a snapped position's).
    public func table(sources: [[RouteEndpoint]], targets: [[RouteEndpoint]]) -> RouteTable {
        // Buckets: every settled node of every backward search, then grouped by node.
        var entries: [(node: Int32, target: Int32, weight: Int, meters: Double)] = []
        for (column, endpoints) in targets.enumerated() {
            search(from: endpoints, up: false)
            for node in settled {
                entries.append((node, Int32(column), side.distance(Int(node)), side.length(Int(node))))
            }
        }
        entries.sort { $0.node < $1.node }
        var bucketFirst = [Int32](repeating: 0, count: hierarchy.nodeCount + 1)
        for entry in entries { bucketFirst[Int(entry.node) + 1] += 1 }
        for node in 0..<hierarchy.nodeCount { bucketFirst[node + 1] += bucketFirst[node] }

        var result = RouteTable(
            sourceCount: sources.count, targetCount: targets.count,
            weights: [Int](repeating: Int.max, count: sources.count * targets.count),
            distances: [Double](repeating: 0, count: sources.count * targets.count))
        for (row, endpoints) in sources.enumerated() {
            search(from: endpoints, up: true)
            for node in settled {
                let weight = side.distance(Int(node)), meters = side.length(Int(node))
                for index in Int(bucketFirst[Int(node)])..<Int(bucketFirst[Int(node) + 1]) {
                    let entry = entries[index]
                    let cell = row * targets.count + Int(entry.target)
                    let total = weight + entry.weight
                    if total < result.weights[cell] {
                        result.weights[cell] = total
                        result.distances[cell] = meters + entry.meters
                    }
                }
            }
        }
        return result
    }

    /// A complete upward search with stall-on-demand; `settled` holds the nodes settled and not stalled.
    private func search(from endpoints: [RouteEndpoint], up: Bool) {
        epoch &+= 1
        side.reset(epoch: epoch)
        settled.removeAll(keepingCapacity: true)
        for endpoint in endpoints {
            side.reach(
                hierarchy.slot(of: endpoint.edge), Int(endpoint.weightOffset), endpoint.lengthOffset, parent: -1,
                middle: -1)
        }
        let h = hierarchy
        next: while !side.isEmpty {
            let (node, key) = side.popMin()
            let here = Int(node)
            let arcs = h.arcs
            for index in up ? h.downArcs(here) : h.upArcs(here) {
                let arc = arcs[index]
                if side.isReached(Int(arc.other)), side.distance(Int(arc.other)) + Int(arc.weight) < key {
                    continue next
                }
            }
            settled.append(node)
            let meters = side.length(here)
            for index in up ? h.upArcs(here) : h.downArcs(here) {
                let arc = arcs[index]
                side.reach(arc.other, key + Int(arc.weight), meters + Double(arc.length), parent: node, middle: -1)
            }
        }
    }
}
