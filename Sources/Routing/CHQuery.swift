/// A bidirectional query on a contraction hierarchy: upward searches from the sources and from the targets, with
/// stall-on-demand, meeting at the route's highest node; the route is unpacked through its shortcuts.
///
/// Not thread-safe: one query object per thread; its search state is allocated once and reused, so a query
/// allocates only its result.
public final class CHQuery {
    private let hierarchy: ContractionHierarchy
    private var forward: SearchSide
    private var backward: SearchSide
    private var epoch: UInt32 = 0

    /// A query over `hierarchy`.
    public init(hierarchy: ContractionHierarchy) {
        self.hierarchy = hierarchy
        forward = SearchSide(capacity: hierarchy.nodeCount)
        backward = SearchSide(capacity: hierarchy.nodeCount)
    }

    /// The shortest route from any source to any target, or nil when none is reachable.
    ///
    /// A source's offset is usually negative (the part of its edge already driven). The searches stop once a
    /// side's smallest key cannot improve on the best meeting, which holds only while every key is at least
    /// zero, so each side's seeds are shifted up by its most negative offset and the shift taken off the result.
    public func route(from sources: [RouteEndpoint], to targets: [RouteEndpoint]) -> RoadPath? {
        let forwardShift = max(0, -Int(sources.map(\.weightOffset).min() ?? 0))
        let backwardShift = max(0, -Int(targets.map(\.weightOffset).min() ?? 0))
        return search(shift: forwardShift + backwardShift) { forward, backward in
            for source in sources {
                forward.reach(source.edge, Int(source.weightOffset) + forwardShift, source.lengthOffset, parent: -1, middle: -1)
            }
            for target in targets {
                backward.reach(target.edge, Int(target.weightOffset) + backwardShift, target.lengthOffset, parent: -1, middle: -1)
            }
        }
    }

    /// The shortest route between two network nodes of `graph` (the graph the hierarchy was built from); the
    /// search itself allocates nothing.
    public func route(fromNode source: Int32, toNode target: Int32, in graph: EdgeBasedGraph) -> RoadPath? {
        search { forward, backward in
            for index in Int(graph.nodeFirstDeparture[Int(source)])..<Int(graph.nodeFirstDeparture[Int(source) + 1]) {
                forward.reach(graph.nodeDepartures[index], 0, 0, parent: -1, middle: -1)
            }
            for index in Int(graph.nodeFirstArrival[Int(target)])..<Int(graph.nodeFirstArrival[Int(target) + 1]) {
                let edge = graph.nodeArrivals[index]
                backward.reach(edge, Int(graph.edgeWeight[Int(edge)]), Double(graph.edgeLength[Int(edge)]), parent: -1, middle: -1)
            }
        }
    }

    /// Seeds both searches, alternates them until neither can improve on the best meeting, and unpacks the route.
    /// `shift` is what the seeds were raised by in all; it is taken off the route's weight.
    private func search(shift: Int = 0, seed: (inout SearchSide, inout SearchSide) -> Void) -> RoadPath? {
        epoch &+= 1
        forward.reset(epoch: epoch)
        backward.reset(epoch: epoch)
        seed(&forward, &backward)
        var best = Int.max, meeting: Int32 = -1
        var forwardTurn = true
        while true {
            let forwardOpen = forward.heap.minKey < best, backwardOpen = backward.heap.minKey < best
            guard forwardOpen || backwardOpen else { break }
            let goForward = forwardOpen && (forwardTurn || !backwardOpen)
            forwardTurn.toggle()
            if goForward {
                step(&forward, up: true, best: &best, meeting: &meeting)
            } else {
                step(&backward, up: false, best: &best, meeting: &meeting)
            }
        }
        guard meeting >= 0 else { return nil }
        return path(meeting: meeting, weight: best - shift)
    }

    /// Settles one node of `side` (the forward search when `up`); reads the other side in place, not a copy.
    private func step(_ side: inout SearchSide, up: Bool, best: inout Int, meeting: inout Int32) {
        let (node, key) = side.heap.popMin()
        let here = Int(node)
        let otherStamp = up ? backward.stamp[here] : forward.stamp[here]
        if otherStamp == epoch {
            let total = key + (up ? backward.distance[here] : forward.distance[here])
            if total < best {
                best = total
                meeting = node
            }
        }
        let h = hierarchy
        // Stall on demand: an arc from a higher node into this one shows a shorter way here; do not expand.
        let stallArcs = up ? h.downArcs(here) : h.upArcs(here)
        for arc in stallArcs {
            let other = Int(up ? h.downTail[arc] : h.upHead[arc])
            let weight = Int(up ? h.downWeight[arc] : h.upWeight[arc])
            if side.stamp[other] == epoch, side.distance[other] + weight < key { return }
        }
        let meters = side.length[here]
        if up {
            for arc in h.upArcs(here) {
                side.reach(h.upHead[arc], key + Int(h.upWeight[arc]), meters + Double(h.upLength[arc]), parent: node, middle: h.upMiddle[arc])
            }
        } else {
            for arc in h.downArcs(here) {
                side.reach(h.downTail[arc], key + Int(h.downWeight[arc]), meters + Double(h.downLength[arc]), parent: node, middle: h.downMiddle[arc])
            }
        }
    }

    private func path(meeting: Int32, weight: Int) -> RoadPath {
        // The forward chain, source to meeting, then the backward chain, meeting to target.
        var chain: [Int32] = []
        var at = meeting
        while at >= 0 {
            chain.append(at)
            at = forward.parent[Int(at)]
        }
        chain.reverse()
        var edges: [Int32] = [chain[0]]
        for (tail, head) in zip(chain, chain.dropFirst()) {
            hierarchy.unpack(tail: tail, head: head, middle: forward.middle[Int(head)], into: &edges)
        }
        at = meeting
        while backward.parent[Int(at)] >= 0 {
            let next = backward.parent[Int(at)]
            hierarchy.unpack(tail: at, head: next, middle: backward.middle[Int(at)], into: &edges)
            at = next
        }
        let meters = forward.length[Int(meeting)] + backward.length[Int(meeting)]
        return RoadPath(edges: edges, weight: weight, distanceMeters: meters)
    }
}

/// One direction's search state: tentative distances, lengths and parents, valid where `stamp` is the epoch.
struct SearchSide {
    var heap: MinHeap
    var distance: [Int]
    var length: [Double]
    var parent: [Int32]
    /// The middle of the arc from `parent` (or to it, backward), to unpack it.
    var middle: [Int32]
    var stamp: [UInt32]
    private var epoch: UInt32 = 0

    init(capacity: Int) {
        heap = MinHeap(capacity: capacity)
        distance = [Int](repeating: 0, count: capacity)
        length = [Double](repeating: 0, count: capacity)
        parent = [Int32](repeating: -1, count: capacity)
        middle = [Int32](repeating: -1, count: capacity)
        stamp = [UInt32](repeating: 0, count: capacity)
    }

    mutating func reset(epoch: UInt32) {
        self.epoch = epoch
        heap.clear()
    }

    @inline(__always)
    mutating func reach(_ node: Int32, _ key: Int, _ meters: Double, parent from: Int32, middle via: Int32) {
        let index = Int(node)
        if stamp[index] == epoch, distance[index] <= key { return }
        stamp[index] = epoch
        distance[index] = key
        length[index] = meters
        parent[index] = from
        middle[index] = via
        heap.pushOrDecrease(node, key: key)
    }
}
