/// A bidirectional query on a contraction hierarchy: upward searches from the sources and from the targets, with
/// stall-on-demand, meeting at the route's highest node; the route is unpacked through its shortcuts.
///
/// Not thread-safe: one query object per thread; its search state is allocated once and reused, so a query
/// allocates only its result.
public final class CHQuery {
    private let hierarchy: ContractionHierarchy
    private let forward: SearchSide
    private let backward: SearchSide
    private var epoch: UInt32 = 0

    /// A query over `hierarchy`.
    public init(hierarchy: ContractionHierarchy) {
        self.hierarchy = hierarchy
        (forward, backward) = SearchSide.pair(capacity: hierarchy.nodeCount)
    }

    deinit {
        forward.deallocate()
        backward.deallocate()
    }

    /// The shortest route from any source to any target, or nil when none is reachable.
    ///
    /// A source's offset is usually negative (the part of its edge already driven). The searches stop once a
    /// side's smallest key cannot improve on the best meeting, which holds only while every key is at least
    /// zero, so each side's seeds are shifted up by its most negative offset and the shift taken off the result.
    public func route(from sources: [RouteEndpoint], to targets: [RouteEndpoint]) -> RoadPath? {
        let forwardShift = max(0, -Int(sources.map(\.weightOffset).min() ?? 0))
        let backwardShift = max(0, -Int(targets.map(\.weightOffset).min() ?? 0))
        let h = hierarchy
        return search(shift: forwardShift + backwardShift) { forward, backward in
            for source in sources {
                forward.reach(
                    h.slot(of: source.edge), Int(source.weightOffset) + forwardShift, source.lengthOffset, parent: -1,
                    middle: -1)
            }
            for target in targets {
                backward.reach(
                    h.slot(of: target.edge), Int(target.weightOffset) + backwardShift, target.lengthOffset, parent: -1,
                    middle: -1)
            }
        }
    }

    /// The shortest route between two network nodes of `graph` (the graph the hierarchy was built from); the
    /// search itself allocates nothing.
    public func route(fromNode source: Int32, toNode target: Int32, in graph: EdgeBasedGraph) -> RoadPath? {
        let h = hierarchy
        return search { forward, backward in
            for index in Int(graph.nodeFirstDeparture[Int(source)])..<Int(graph.nodeFirstDeparture[Int(source) + 1]) {
                forward.reach(h.slot(of: graph.nodeDepartures[index]), 0, 0, parent: -1, middle: -1)
            }
            for index in Int(graph.nodeFirstArrival[Int(target)])..<Int(graph.nodeFirstArrival[Int(target) + 1]) {
                let edge = graph.nodeArrivals[index]
                backward.reach(
                    h.slot(of: edge), Int(graph.edgeWeight[Int(edge)]), Double(graph.edgeLength[Int(edge)]), parent: -1,
                    middle: -1)
            }
        }
    }

    /// Seeds both searches, alternates them until neither can improve on the best meeting, and unpacks the route.
    /// `shift` is what the seeds were raised by in all; it is taken off the route's weight.
    private func search(shift: Int = 0, seed: (SearchSide, SearchSide) -> Void) -> RoadPath? {
        epoch &+= 1
        forward.reset(epoch: epoch)
        backward.reset(epoch: epoch)
        seed(forward, backward)
        var best = Int.max, meeting: Int32 = -1
        var forwardTurn = true
        while true {
            let forwardOpen = forward.minKey < best, backwardOpen = backward.minKey < best
            guard forwardOpen || backwardOpen else { break }
            let goForward = forwardOpen && (forwardTurn || !backwardOpen)
            forwardTurn.toggle()
            if goForward {
                step(forward, up: true, best: &best, meeting: &meeting)
            } else {
                step(backward, up: false, best: &best, meeting: &meeting)
            }
        }
        guard meeting >= 0 else { return nil }
        return path(meeting: meeting, weight: best - shift)
    }

    /// Settles one node of `side` (the forward search when `up`); reads the other side in place, not a copy.
    private func step(_ side: SearchSide, up: Bool, best: inout Int, meeting: inout Int32) {
        let (node, key) = side.popMin()
        let here = Int(node)
        // The other side is read in place (its labels are shared by pointer), never copied.
        let reached = up ? backward.isReached(here) : forward.isReached(here)
        if reached {
            let total = key + (up ? backward.distance(here) : forward.distance(here))
            if total < best {
                best = total
                meeting = node
            }
        }
        let h = hierarchy
        // Stall on demand: an arc from a higher node into this one shows a shorter way here; do not expand.
        let stallArcs = up ? h.downArcs(here) : h.upArcs(here)
        let arcs = h.arcs
        for index in stallArcs {
            let arc = arcs[index]
            if side.isReached(Int(arc.other)), side.distance(Int(arc.other)) + Int(arc.weight) < key { return }
        }
        let meters = side.length(here)
        for index in up ? h.upArcs(here) : h.downArcs(here) {
            let arc = arcs[index]
            side.reach(arc.other, key + Int(arc.weight), meters + Double(arc.length), parent: node, middle: arc.middle)
        }
    }

    private func path(meeting: Int32, weight: Int) -> RoadPath {
        // The forward chain, source to meeting, then the backward chain, meeting to target.
        var chain: [Int32] = []
        var at = meeting
        while at >= 0 {
            chain.append(at)
            at = forward.parent(Int(at))
        }
        chain.reverse()
        var edges: [Int32] = [hierarchy.nodeAtSlot[Int(chain[0])]]
        for (tail, head) in zip(chain, chain.dropFirst()) {
            hierarchy.unpack(tail: tail, head: head, middle: forward.middle(Int(head)), into: &edges)
        }
        at = meeting
        while backward.parent(Int(at)) >= 0 {
            let next = backward.parent(Int(at))
            hierarchy.unpack(tail: at, head: next, middle: backward.middle(Int(at)), into: &edges)
            at = next
        }
        let meters = forward.length(Int(meeting)) + backward.length(Int(meeting))
        return RoadPath(edges: edges, weight: weight, distanceMeters: meters)
    }
}

/// One direction's search state: each node's label (tentative distance, length, parent, the middle of the arc from
/// it, the epoch it was set in and its place in the heap) packed together, so that touching a node costs one cache
/// line rather than one per field: on a city's graph most of a query's time is those misses.
///
/// Allocated once per query object and reused (its owner calls `deallocate()` once); a label is valid only where its
/// stamp is the current epoch. Every field lives behind a pointer, so a side is handed around by value and changed
/// in place without the access checks a class's stored property (or an array's uniqueness test) costs per node.
///
/// A bidirectional query's two sides share one label array, a node's forward and backward labels side by side in
/// one cache line (`pair`): settling a node on one side reads the other side's label of it, which is then no miss.
struct SearchSide {
    struct Label {
        var distance: Int
        var length: Double
        var parent: Int32
        var middle: Int32
        var stamp: UInt32
        /// The label's place in `heap`, or -1.
        var position: Int32
    }

    /// A heap entry: the key beside its node, so sifting reads one array.
    struct Entry {
        var key: Int
        var node: Int32
    }

    /// The heap's size and the current epoch.
    private struct State {
        var count: Int
        var epoch: UInt32
    }

    /// Node `n`'s label is `labels[n * stride]`.
    private let labels: UnsafeMutablePointer<Label>
    private let stride: Int
    /// Whether `labels` is this side's allocation to free (the first of a pair).
    private let ownsLabels: Bool
    /// A binary min-heap on key; a node is in it at most once, so `capacity` entries always suffice.
    private let heap: UnsafeMutablePointer<Entry>
    private let state: UnsafeMutablePointer<State>
    private let capacity: Int

    /// One side with labels of its own.
    init(capacity: Int) {
        self.init(capacity: capacity, labels: Self.allocateLabels(max(1, capacity)), stride: 1, ownsLabels: true)
    }

    /// A forward and a backward side whose labels of each node lie side by side.
    static func pair(capacity: Int) -> (SearchSide, SearchSide) {
        let labels = allocateLabels(2 * max(1, capacity))
        return (
            SearchSide(capacity: capacity, labels: labels, stride: 2, ownsLabels: true),
            SearchSide(capacity: capacity, labels: labels + 1, stride: 2, ownsLabels: false)
        )
    }

    private init(capacity: Int, labels: UnsafeMutablePointer<Label>, stride: Int, ownsLabels: Bool) {
        self.capacity = capacity
        self.labels = labels
        self.stride = stride
        self.ownsLabels = ownsLabels
        heap = .allocate(capacity: max(1, capacity))
        state = .allocate(capacity: 1)
        state.initialize(to: State(count: 0, epoch: 0))
    }

    /// `count` labels from a cache line's boundary, so a pair's two labels of a node (32 bytes each) share a line.
    private static func allocateLabels(_ count: Int) -> UnsafeMutablePointer<Label> {
        let raw = UnsafeMutableRawPointer.allocate(byteCount: count * MemoryLayout<Label>.stride, alignment: 64)
        let labels = raw.bindMemory(to: Label.self, capacity: count)
        labels.initialize(
            repeating: Label(distance: 0, length: 0, parent: -1, middle: -1, stamp: 0, position: -1), count: count)
        return labels
    }

    /// Frees the state (a pair's shared labels with its first side); the side is not used again.
    func deallocate() {
        if ownsLabels { UnsafeMutableRawPointer(labels).deallocate() }
        heap.deallocate()
        state.deallocate()
    }

    @inline(__always) private func label(_ node: Int) -> UnsafeMutablePointer<Label> { labels + node &* stride }

    func reset(epoch: UInt32) {
        state.pointee.epoch = epoch
        for index in 0..<state.pointee.count { label(Int(heap[index].node)).pointee.position = -1 }
        state.pointee.count = 0
    }

    var isEmpty: Bool { state.pointee.count == 0 }
    /// The smallest key in the heap, or `Int.max` when empty.
    var minKey: Int { state.pointee.count == 0 ? Int.max : heap[0].key }

    @inline(__always) func isReached(_ node: Int) -> Bool { label(node).pointee.stamp == state.pointee.epoch }
    @inline(__always) func distance(_ node: Int) -> Int { label(node).pointee.distance }
    @inline(__always) func length(_ node: Int) -> Double { label(node).pointee.length }
    @inline(__always) func parent(_ node: Int) -> Int32 { label(node).pointee.parent }
    @inline(__always) func middle(_ node: Int) -> Int32 { label(node).pointee.middle }

    @inline(__always)
    func reach(_ node: Int32, _ key: Int, _ meters: Double, parent from: Int32, middle via: Int32) {
        let index = Int(node)
        precondition(index >= 0 && index < capacity, "node out of range")
        let label = label(index)
        if label.pointee.stamp == state.pointee.epoch {
            guard key < label.pointee.distance else { return }
            label.pointee.distance = key
            label.pointee.length = meters
            label.pointee.parent = from
            label.pointee.middle = via
            if label.pointee.position >= 0 {
                let at = Int(label.pointee.position)
                heap[at].key = key
                siftUp(at)
            } else {
                push(node, key)
            }
            return
        }
        label.pointee = Label(
            distance: key, length: meters, parent: from, middle: via, stamp: state.pointee.epoch, position: -1)
        push(node, key)
    }

    /// Removes and returns the node with the smallest key; the heap must not be empty.
    func popMin() -> (node: Int32, key: Int) {
        let top = heap[0]
        label(Int(top.node)).pointee.position = -1
        state.pointee.count -= 1
        let count = state.pointee.count
        if count > 0 {
            heap[0] = heap[count]
            label(Int(heap[0].node)).pointee.position = 0
            siftDown(0)
        }
        return (top.node, top.key)
    }

    private func push(_ node: Int32, _ key: Int) {
        let at = state.pointee.count
        heap[at] = Entry(key: key, node: node)
        state.pointee.count = at + 1
        label(Int(node)).pointee.position = Int32(at)
        siftUp(at)
    }

    private func siftUp(_ start: Int) {
        var child = start
        let moving = heap[child]
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[parent].key > moving.key else { break }
            heap[child] = heap[parent]
            label(Int(heap[child].node)).pointee.position = Int32(child)
            child = parent
        }
        heap[child] = moving
        label(Int(moving.node)).pointee.position = Int32(child)
    }

    private func siftDown(_ start: Int) {
        var parent = start
        let moving = heap[parent]
        let count = state.pointee.count
        while true {
            var child = 2 * parent + 1
            guard child < count else { break }
            if child + 1 < count, heap[child + 1].key < heap[child].key { child += 1 }
            guard heap[child].key < moving.key else { break }
            heap[parent] = heap[child]
            label(Int(heap[parent].node)).pointee.position = Int32(parent)
            parent = child
        }
        heap[parent] = moving
        label(Int(moving.node)).pointee.position = Int32(parent)
    }
}
