/// Contraction hierarchies over the edge-based graph, in struct-of-arrays form with `Int32` indices (ready to be
/// written to a file and memory-mapped).
///
/// Every arc, original turn or shortcut, is stored once at its lower-ranked end: `up` arcs lead from a node to a
/// higher-ranked head (the forward search's), `down` arcs hold the higher-ranked tail of an arc into the node (the
/// backward search's). A shortcut's `middle` is the node it bypasses (-1 for an original turn); the two arcs it
/// replaces are `middle`'s down arc from the tail and `middle`'s up arc to the head.
public struct ContractionHierarchy: Sendable {
    /// The number of nodes (the network's directed edges).
    public let nodeCount: Int
    /// Each node's contraction order (0 first contracted).
    public let rank: [Int32]
    /// CSR offsets of the up arcs.
    public let upFirst: [Int32]
    /// Each up arc's head.
    public let upHead: [Int32]
    /// Each up arc's weight in deciseconds.
    public let upWeight: [Int32]
    /// Each up arc's length in metres.
    public let upLength: [Float]
    /// Each up arc's bypassed node, or -1.
    public let upMiddle: [Int32]
    /// CSR offsets of the down arcs.
    public let downFirst: [Int32]
    /// Each down arc's tail (higher-ranked).
    public let downTail: [Int32]
    /// Each down arc's weight in deciseconds.
    public let downWeight: [Int32]
    /// Each down arc's length in metres.
    public let downLength: [Float]
    /// Each down arc's bypassed node, or -1.
    public let downMiddle: [Int32]
    /// The shortcuts added by contraction.
    public let shortcutCount: Int

    /// Witness-search bounds for contraction.
    public struct Options: Sendable {
        /// At most this many nodes settled per witness search.
        public var witnessSettleLimit: Int
        /// Witness paths of at most this many arcs.
        public var witnessHopLimit: Int

        /// Bounds for witness searches; tighter bounds build faster and add more shortcuts.
        public init(witnessSettleLimit: Int = 500, witnessHopLimit: Int = 8) {
            self.witnessSettleLimit = witnessSettleLimit
            self.witnessHopLimit = witnessHopLimit
        }
    }

    /// Contracts `graph`: nodes ordered lazily by edge difference, deleted neighbours and level.
    public init(graph: EdgeBasedGraph, options: Options = Options()) {
        var builder = ContractionBuilder(graph: graph, options: options)
        builder.contractAll()
        nodeCount = graph.nodeCount
        rank = builder.rank
        shortcutCount = builder.shortcutCount
        (upFirst, upHead, upWeight, upLength, upMiddle) = Self.flatten(builder.finalUp)
        (downFirst, downTail, downWeight, downLength, downMiddle) = Self.flatten(builder.finalDown)
    }

    /// The up arcs' index range of `node`.
    @inline(__always) func upArcs(_ node: Int) -> Range<Int> { Int(upFirst[node])..<Int(upFirst[node + 1]) }
    /// The down arcs' index range of `node`.
    @inline(__always) func downArcs(_ node: Int) -> Range<Int> { Int(downFirst[node])..<Int(downFirst[node + 1]) }

    /// The up arc from `node` to `head`'s middle.
    func upMiddle(from node: Int32, to head: Int32) -> Int32 {
        for arc in upArcs(Int(node)) where upHead[arc] == head { return upMiddle[arc] }
        preconditionFailure("no up arc \(node) → \(head)")
    }

    /// The down arc into `node` from `tail`'s middle.
    func downMiddle(into node: Int32, from tail: Int32) -> Int32 {
        for arc in downArcs(Int(node)) where downTail[arc] == tail { return downMiddle[arc] }
        preconditionFailure("no down arc \(tail) → \(node)")
    }

    /// Appends the original nodes of the arc `tail → head` (whose middle is `middle`) after `tail` to `path`.
    func unpack(tail: Int32, head: Int32, middle: Int32, into path: inout [Int32]) {
        // An explicit stack of arcs still to expand, the next one on top.
        var stack: [(tail: Int32, head: Int32, middle: Int32)] = [(tail, head, middle)]
        while let arc = stack.popLast() {
            if arc.middle < 0 {
                path.append(arc.head)
                continue
            }
            let m = arc.middle
            stack.append((m, arc.head, upMiddle(from: m, to: arc.head)))
            stack.append((arc.tail, m, downMiddle(into: m, from: arc.tail)))
        }
    }

    private static func flatten(_ lists: [[DynamicArc]]) -> ([Int32], [Int32], [Int32], [Float], [Int32]) {
        var first = [Int32](repeating: 0, count: lists.count + 1)
        let total = lists.reduce(0) { $0 + $1.count }
        var node = [Int32](), weight = [Int32](), length = [Float](), middle = [Int32]()
        node.reserveCapacity(total); weight.reserveCapacity(total); length.reserveCapacity(total); middle.reserveCapacity(total)
        for (index, list) in lists.enumerated() {
            first[index] = Int32(node.count)
            for arc in list {
                node.append(arc.node)
                weight.append(arc.weight)
                length.append(arc.length)
                middle.append(arc.middle)
            }
        }
        first[lists.count] = Int32(node.count)
        return (first, node, weight, length, middle)
    }
}

/// An arc of the graph being contracted: the other end, its weight and length, and the bypassed node or -1.
struct DynamicArc {
    var node: Int32
    var weight: Int32
    var length: Float
    var middle: Int32
}

/// The contraction itself: a dynamic graph of the nodes not yet contracted, shrinking one node at a time.
struct ContractionBuilder {
    private let options: ContractionHierarchy.Options
    private var out: [[DynamicArc]]
    private var into: [[DynamicArc]]
    private(set) var finalUp: [[DynamicArc]]
    private(set) var finalDown: [[DynamicArc]]
    private(set) var rank: [Int32]
    private(set) var shortcutCount = 0
    private var deletedNeighbours: [Int32]
    private var level: [Int32]
    private var queue: MinHeap

    // Witness search state, reused.
    private var witnessHeap: MinHeap
    private var witnessDistance: [Int]
    private var witnessHops: [Int32]
    private var witnessStamp: [UInt32]
    private var epoch: UInt32 = 0
    private var pending: [(tail: Int32, head: Int32, weight: Int32, length: Float)] = []
    private var neighbourStamp: [UInt32]
    private var neighbourEpoch: UInt32 = 0

    init(graph: EdgeBasedGraph, options: ContractionHierarchy.Options) {
        self.options = options
        let count = graph.nodeCount
        out = [[DynamicArc]](repeating: [], count: count)
        into = [[DynamicArc]](repeating: [], count: count)
        for tail in 0..<count {
            for arc in Int(graph.firstArc[tail])..<Int(graph.firstArc[tail + 1]) {
                let head = graph.arcHead[arc]
                let dynamic = DynamicArc(node: head, weight: graph.arcWeight[arc], length: graph.arcLength[arc], middle: -1)
                if let existing = out[tail].firstIndex(where: { $0.node == head }) {
                    if dynamic.weight < out[tail][existing].weight {
                        out[tail][existing] = dynamic
                        let back = into[Int(head)].firstIndex { $0.node == Int32(tail) }!
                        into[Int(head)][back] = DynamicArc(node: Int32(tail), weight: dynamic.weight, length: dynamic.length, middle: -1)
                    }
                    continue
                }
                out[tail].append(dynamic)
                into[Int(head)].append(DynamicArc(node: Int32(tail), weight: dynamic.weight, length: dynamic.length, middle: -1))
            }
        }
        finalUp = [[DynamicArc]](repeating: [], count: count)
        finalDown = [[DynamicArc]](repeating: [], count: count)
        rank = [Int32](repeating: -1, count: count)
        deletedNeighbours = [Int32](repeating: 0, count: count)
        level = [Int32](repeating: 0, count: count)
        queue = MinHeap(capacity: count)
        witnessHeap = MinHeap(capacity: count)
        witnessDistance = [Int](repeating: 0, count: count)
        witnessHops = [Int32](repeating: 0, count: count)
        witnessStamp = [UInt32](repeating: 0, count: count)
        neighbourStamp = [UInt32](repeating: 0, count: count)
    }

    mutating func contractAll() {
        let count = rank.count
        for node in 0..<count { queue.pushOrDecrease(Int32(node), key: priority(of: Int32(node))) }
        var order: Int32 = 0
        while !queue.isEmpty {
            let (node, _) = queue.popMin()
            // Lazy update: a node whose fresh priority is no longer the smallest goes back in.
            let fresh = priority(of: node)
            if !queue.isEmpty, fresh > queue.minKey {
                queue.pushOrDecrease(node, key: fresh)
                continue
            }
            contract(node)
            rank[Int(node)] = order
            order += 1
        }
    }

    /// Edge difference (shortcuts added minus arcs removed), deleted neighbours and level, weighted.
    private mutating func priority(of node: Int32) -> Int {
        findShortcuts(of: node)
        let removed = out[Int(node)].count + into[Int(node)].count
        let edgeDifference = pending.count - removed
        return 4 * edgeDifference + 2 * Int(deletedNeighbours[Int(node)]) + Int(level[Int(node)])
    }

    private mutating func contract(_ node: Int32) {
        findShortcuts(of: node)
        let index = Int(node)
        finalUp[index] = out[index]
        finalDown[index] = into[index]
        for arc in out[index] { into[Int(arc.node)].removeAll { $0.node == node } }
        for arc in into[index] { out[Int(arc.node)].removeAll { $0.node == node } }
        for shortcut in pending {
            addArc(tail: shortcut.tail, head: shortcut.head, weight: shortcut.weight, length: shortcut.length, middle: node)
        }
        neighbourEpoch &+= 1
        for arc in out[index] + into[index] where neighbourStamp[Int(arc.node)] != neighbourEpoch {
            let neighbour = Int(arc.node)
            neighbourStamp[neighbour] = neighbourEpoch
            deletedNeighbours[neighbour] += 1
            level[neighbour] = max(level[neighbour], level[index] + 1)
            queue.update(arc.node, key: priority(of: arc.node))
        }
        out[index] = []
        into[index] = []
    }

    private mutating func addArc(tail: Int32, head: Int32, weight: Int32, length: Float, middle: Int32) {
        if let existing = out[Int(tail)].firstIndex(where: { $0.node == head }) {
            guard weight < out[Int(tail)][existing].weight else { return }
            out[Int(tail)][existing] = DynamicArc(node: head, weight: weight, length: length, middle: middle)
            let back = into[Int(head)].firstIndex { $0.node == tail }!
            into[Int(head)][back] = DynamicArc(node: tail, weight: weight, length: length, middle: middle)
            return
        }
        out[Int(tail)].append(DynamicArc(node: head, weight: weight, length: length, middle: middle))
        into[Int(head)].append(DynamicArc(node: tail, weight: weight, length: length, middle: middle))
        shortcutCount += 1
    }

    /// Fills `pending` with the shortcuts contracting `node` needs: each in-arc and out-arc pair whose path through
    /// `node` has no witness at most as short (a bounded search may miss a witness, adding a needless shortcut).
    private mutating func findShortcuts(of node: Int32) {
        pending.removeAll(keepingCapacity: true)
        let index = Int(node)
        guard !out[index].isEmpty else { return }
        var maxOut: Int32 = 0
        for arc in out[index] { maxOut = max(maxOut, arc.weight) }
        for incoming in into[index] {
            let source = incoming.node
            witnessSearch(from: source, avoiding: node, limit: Int(incoming.weight) + Int(maxOut))
            for outgoing in out[index] where outgoing.node != source {
                let through = Int(incoming.weight) + Int(outgoing.weight)
                let head = Int(outgoing.node)
                if witnessStamp[head] == epoch, witnessDistance[head] <= through { continue }
                pending.append((source, outgoing.node, Int32(through), incoming.length + outgoing.length))
            }
        }
    }

    private mutating func witnessSearch(from source: Int32, avoiding avoided: Int32, limit: Int) {
        epoch &+= 1
        witnessHeap.clear()
        witnessStamp[Int(source)] = epoch
        witnessDistance[Int(source)] = 0
        witnessHops[Int(source)] = 0
        witnessHeap.pushOrDecrease(source, key: 0)
        var settled = 0
        while !witnessHeap.isEmpty {
            let (node, key) = witnessHeap.popMin()
            if key > limit { break }
            settled += 1
            if settled > options.witnessSettleLimit { break }
            let hops = witnessHops[Int(node)] + 1
            if Int(hops) > options.witnessHopLimit { continue }
            for arc in out[Int(node)] where arc.node != avoided {
                let head = Int(arc.node), candidate = key + Int(arc.weight)
                if witnessStamp[head] == epoch, witnessDistance[head] <= candidate { continue }
                witnessStamp[head] = epoch
                witnessDistance[head] = candidate
                witnessHops[head] = hops
                witnessHeap.pushOrDecrease(arc.node, key: candidate)
            }
        }
    }
}
