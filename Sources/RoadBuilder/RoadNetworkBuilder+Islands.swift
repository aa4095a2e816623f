extension RoadNetworkBuilder {
    /// The directed edges the segments become, one per direction the profile allows, before islands are dropped.
    struct PendingEdges {
        var from: [Int32] = []
        var to: [Int32] = []
        var segment: [Int32] = []
        /// Whether the edge runs the way of its segment.
        var forward: [Bool] = []

        init(segments: [Segment], ways: [UsedWay]) {
            for (index, segment) in segments.enumerated() {
                let attributes = ways[Int(segment.way)].attributes
                if attributes.forward {
                    from.append(segment.from); to.append(segment.to)
                    self.segment.append(Int32(index)); forward.append(true)
                }
                if attributes.backward {
                    from.append(segment.to); to.append(segment.from)
                    self.segment.append(Int32(index)); forward.append(false)
                }
            }
        }
    }

    /// Whether each graph node is kept: false for the nodes of the strongly connected components dropped as islands.
    static func keptNodes(
        nodeCount: Int, segments: [Segment], edges: PendingEdges, minimumComponentSize: Int,
        minimumComponentMeters: Double, report: inout BuildReport
    ) -> [Bool] {
        let component = StrongComponents.label(nodeCount: nodeCount, edgeFrom: edges.from, edgeTo: edges.to)
        var isIsland = islands(
            component, segments: segments, minimumComponentSize: minimumComponentSize,
            minimumComponentMeters: minimumComponentMeters)
        keepLinks(between: &isIsland, component, edges: edges)
        report.islandsRemoved = isIsland.filter { $0 }.count
        let keep = component.labels.map { !isIsland[Int($0)] }
        report.islandNodesRemoved = keep.filter { !$0 }.count
        return keep
    }

    /// Whether each component is an island by its size: under the node threshold, and either under the metres
    /// threshold or part of a weakly connected whole under the node threshold.
    private static func islands(
        _ component: StrongComponents.Labels, segments: [Segment], minimumComponentSize: Int,
        minimumComponentMeters: Double
    ) -> [Bool] {
        var componentSize = [Int](repeating: 0, count: component.count)
        for label in component.labels { componentSize[Int(label)] += 1 }
        // Road inside each component (a segment whose two ends it holds, once whichever directions it allows):
        // the measure that does not change with where ways happen to be split.
        var componentMeters = [Double](repeating: 0, count: component.count)
        for segment in segments where component.labels[Int(segment.from)] == component.labels[Int(segment.to)] {
            componentMeters[Int(component.labels[Int(segment.from)])] += segment.lengthMeters
        }
        // The weakly connected whole each component belongs to, by union-find over the segments: a part that
        // holds enough road is kept only when it hangs off a network of at least the node threshold (a district
        // one-way streets cut off at an extract's edge), never when nothing joins it to anything.
        var parent = Array(0..<Int32(component.count))
        func root(_ label: Int32) -> Int32 {
            var label = label
            while parent[Int(label)] != label {
                parent[Int(label)] = parent[Int(parent[Int(label)])]; label = parent[Int(label)]
            }
            return label
        }
        for segment in segments {
            let a = root(component.labels[Int(segment.from)]), b = root(component.labels[Int(segment.to)])
            if a != b { parent[Int(max(a, b))] = min(a, b) }
        }
        var wholeSize = [Int](repeating: 0, count: component.count)
        for label in 0..<component.count { wholeSize[Int(root(Int32(label)))] += componentSize[label] }
        return (0..<component.count).map {
            componentSize[$0] < minimumComponentSize
                && (componentMeters[$0] < minimumComponentMeters
                    || wholeSize[Int(root(Int32($0)))] < minimumComponentSize)
        }
    }

    /// Keeps the short one-way links between kept parts (each its own one-node component): a part kept is no use if
    /// the way into it is dropped. Those are the parts reachable from a kept one that reach a kept one.
    private static func keepLinks(
        between isIsland: inout [Bool], _ component: StrongComponents.Labels, edges: PendingEdges
    ) {
        var successors = [[Int32]](repeating: [], count: component.count)
        var predecessors = [[Int32]](repeating: [], count: component.count)
        for (from, to) in zip(edges.from, edges.to) {
            let a = component.labels[Int(from)], b = component.labels[Int(to)]
            if a != b { successors[Int(a)].append(b); predecessors[Int(b)].append(a) }
        }
        let kept = isIsland.map { !$0 }
        func reached(along next: [[Int32]]) -> [Bool] {
            var seen = kept
            var queue = (0..<component.count).filter { seen[$0] }.map(Int32.init)
            while let label = queue.popLast() {
                for other in next[Int(label)] where !seen[Int(other)] { seen[Int(other)] = true; queue.append(other) }
            }
            return seen
        }
        let fromKept = reached(along: successors), toKept = reached(along: predecessors)
        for label in 0..<component.count where isIsland[label] && fromKept[label] && toKept[label] {
            isIsland[label] = false
        }
    }
}
