/// Contraction hierarchies over the edge-based graph, in struct-of-arrays form with `Int32` indices (ready to be
/// written to a file and memory-mapped).
///
/// Every arc, original turn or shortcut, is stored once at its lower-ranked end: `up` arcs lead from a node to a
/// higher-ranked head (the forward search's), `down` arcs hold the higher-ranked tail of an arc into the node (the
/// backward search's). A shortcut's `middle` is the node it bypasses (-1 for an original turn); the two arcs it
/// replaces are `middle`'s down arc from the tail and `middle`'s up arc to the head.
///
/// The arcs are stored by search slot, not by node: slots run from the highest rank down (`slot(of:)`,
/// `nodeAtSlot`), so the top of the hierarchy, which every search climbs, lies together in memory and a search
/// from a cold cache misses far less. Heads, tails and middles are slots too; the graph file keeps them by node.
public struct ContractionHierarchy: Sendable {
    /// The number of nodes (the network's directed edges).
    public let nodeCount: Int
    /// Each node's contraction order (0 first contracted).
    public let rank: [Int32]
    /// The node at each search slot (slot 0 the highest-ranked node).
    public let nodeAtSlot: [Int32]
    /// Every arc by slot, each slot's up arcs (to a higher-ranked head) then its down arcs (from a higher-ranked
    /// tail): a search's stall check reads one list and its relaxation the other, so they share cache lines.
    public let arcs: [Arc]
    /// Slot `s`'s up arcs are `arcs[arcFirst[2s]..<arcFirst[2s+1]]`, its down arcs
    /// `arcs[arcFirst[2s+1]..<arcFirst[2s+2]]`.
    public let arcFirst: [Int32]
    /// The number of up arcs.
    public let upArcCount: Int

    /// One arc as the search reads it: its fields side by side, so following an arc costs one cache line, not four.
    public struct Arc: Sendable, Equatable {
        /// The other end's slot (an up arc's head, a down arc's tail).
        public var other: Int32
        /// The weight in deciseconds.
        public var weight: Int32
        /// The length in metres.
        public var length: Float
        /// The bypassed slot, or -1 for an original turn.
        public var middle: Int32
    }
    /// The shortcuts added by contraction.
    public let shortcutCount: Int

    /// Witness-search bounds for contraction.
    public struct Options: Sendable {
        /// At most this many nodes settled per witness search.
        public var witnessSettleLimit: Int
        /// Witness paths of at most this many arcs.
        public var witnessHopLimit: Int

        /// At most this many nodes settled per witness search while only estimating a node's priority.
        public var estimateSettleLimit: Int
        /// Witness paths of at most this many arcs while only estimating a node's priority.
        public var estimateHopLimit: Int
        /// A touched node whose degree moved by at most a quarter keeps its simulated shortcut terms for up to this
        /// many rounds before it is simulated again (1: every time).
        public var maxStaleness: Int32

        /// Bounds for witness searches; tighter bounds build faster and add more shortcuts.
        public init(
            witnessSettleLimit: Int = 1000, witnessHopLimit: Int = 16, estimateSettleLimit: Int = 60,
            estimateHopLimit: Int = 3,
            maxStaleness: Int32 = 6
        ) {
            self.witnessSettleLimit = witnessSettleLimit
            self.witnessHopLimit = witnessHopLimit
            self.estimateSettleLimit = estimateSettleLimit
            self.estimateHopLimit = estimateHopLimit
            self.maxStaleness = maxStaleness
        }
    }

    /// Contracts `graph` in rounds of independent nodes ordered by edge difference, deleted neighbours, original turns
    /// and level.
    public init(graph: EdgeBasedGraph, options: Options = Options()) {
        var builder = ContractionBuilder(graph: graph, options: options)
        builder.contractAll()
        self.init(builder: builder, nodeCount: graph.nodeCount)
    }

    /// The hierarchy for `graph` (new weights on the same turns, e.g. live speeds) contracted in this hierarchy's
    /// node order: the same exact witness-searched contraction without the priority estimates and rounds, so
    /// several times faster than a fresh one. The graph must have this hierarchy's node count.
    public func customized(graph: EdgeBasedGraph, options: Options = Options()) -> ContractionHierarchy {
        precondition(graph.nodeCount == nodeCount, "the graph has \(graph.nodeCount) nodes, the hierarchy \(nodeCount)")
        var builder = ContractionBuilder(graph: graph, options: options)
        builder.contract(inOrderOf: rank)
        return ContractionHierarchy(builder: builder, nodeCount: nodeCount)
    }

    private init(builder: ContractionBuilder, nodeCount: Int) {
        let up = Self.flatten(builder.finalUp), down = Self.flatten(builder.finalDown)
        self.init(nodeCount: nodeCount, rank: builder.rank, up: up, down: down, shortcutCount: builder.shortcutCount)
    }

    /// A hierarchy from its arcs stored by node (the graph file's reader, which checks them first).
    init(nodeCount: Int, rank: [Int32], up: Arcs, down: Arcs, shortcutCount: Int) {
        self.nodeCount = nodeCount
        self.rank = rank
        self.shortcutCount = shortcutCount
        var nodeAtSlot = [Int32](repeating: 0, count: nodeCount)
        for node in 0..<nodeCount { nodeAtSlot[Int(Self.slot(of: Int32(node), rank: rank))] = Int32(node) }
        self.nodeAtSlot = nodeAtSlot
        let slot: (Int32) -> Int32 = { node in node < 0 ? node : Self.slot(of: node, rank: rank) }
        let upBySlot = up.permuted(order: nodeAtSlot, mapping: slot).packed
        let downBySlot = down.permuted(order: nodeAtSlot, mapping: slot).packed
        var arcs: [Arc] = [], arcFirst = [Int32](repeating: 0, count: 2 * nodeCount + 1)
        arcs.reserveCapacity(upBySlot.arcs.count + downBySlot.arcs.count)
        for slot in 0..<nodeCount {
            arcFirst[2 * slot] = Int32(arcs.count)
            arcs += upBySlot.arcs[Int(upBySlot.first[slot])..<Int(upBySlot.first[slot + 1])]
            arcFirst[2 * slot + 1] = Int32(arcs.count)
            arcs += downBySlot.arcs[Int(downBySlot.first[slot])..<Int(downBySlot.first[slot + 1])]
        }
        arcFirst[2 * nodeCount] = Int32(arcs.count)
        (self.arcs, self.arcFirst, upArcCount) = (arcs, arcFirst, upBySlot.arcs.count)
    }

    /// The number of down arcs.
    public var downArcCount: Int { arcs.count - upArcCount }

    /// Arcs in CSR form: offsets, the other end, weight (deciseconds), length (metres) and bypassed end or -1.
    struct Arcs {
        var first: [Int32], other: [Int32], weight: [Int32], length: [Float], middle: [Int32]

        /// The arcs as packed records, with their offsets.
        var packed: (first: [Int32], arcs: [Arc]) {
            (
                first,
                other.indices.map { Arc(other: other[$0], weight: weight[$0], length: length[$0], middle: middle[$0]) }
            )
        }

        /// The same arcs listed in `order` (the old index of each new position), each end renamed by `mapping`.
        func permuted(order: [Int32], mapping: (Int32) -> Int32) -> Arcs {
            var result = Arcs(
                first: [Int32](repeating: 0, count: order.count + 1), other: [], weight: [], length: [], middle: [])
            result.other.reserveCapacity(other.count); result.weight.reserveCapacity(other.count)
            result.length.reserveCapacity(other.count); result.middle.reserveCapacity(other.count)
            for (position, old) in order.enumerated() {
                result.first[position] = Int32(result.other.count)
                for arc in Int(first[Int(old)])..<Int(first[Int(old) + 1]) {
                    result.other.append(mapping(other[arc]))
                    result.weight.append(weight[arc])
                    result.length.append(length[arc])
                    result.middle.append(mapping(middle[arc]))
                }
            }
            result.first[order.count] = Int32(result.other.count)
            return result
        }
    }

    /// The search slot of `node` (a directed road edge).
    @inline(__always) public func slot(of node: Int32) -> Int32 { Self.slot(of: node, rank: rank) }

    /// Slots run from the highest rank down: the node contracted last is at slot 0.
    @inline(__always) static func slot(of node: Int32, rank: [Int32]) -> Int32 {
        Int32(rank.count - 1) - rank[Int(node)]
    }

    /// The up and down arcs stored by node, as the graph file keeps them.
    func arcsByNode() -> (up: Arcs, down: Arcs) {
        var order = [Int32](repeating: 0, count: nodeCount)
        for node in 0..<nodeCount { order[node] = slot(of: Int32(node)) }
        let node: (Int32) -> Int32 = { [nodeAtSlot] slot in slot < 0 ? slot : nodeAtSlot[Int(slot)] }
        return (
            bySlot(up: true).permuted(order: order, mapping: node),
            bySlot(up: false).permuted(order: order, mapping: node)
        )
    }

    /// The up or down arcs alone, by slot.
    private func bySlot(up: Bool) -> Arcs {
        var result = Arcs(first: [0], other: [], weight: [], length: [], middle: [])
        for slot in 0..<nodeCount {
            for arc in arcs[up ? upArcs(slot) : downArcs(slot)] {
                result.other.append(arc.other); result.weight.append(arc.weight)
                result.length.append(arc.length); result.middle.append(arc.middle)
            }
            result.first.append(Int32(result.other.count))
        }
        return result
    }

    /// The up arcs' index range of the node at `slot`.
    @inline(__always) func upArcs(_ slot: Int) -> Range<Int> { Int(arcFirst[2 * slot])..<Int(arcFirst[2 * slot + 1]) }
    /// The down arcs' index range of the node at `slot`.
    @inline(__always) func downArcs(_ slot: Int) -> Range<Int> {
        Int(arcFirst[2 * slot + 1])..<Int(arcFirst[2 * slot + 2])
    }

    /// The up arc from slot `node` to slot `head`'s middle.
    func upMiddle(from node: Int32, to head: Int32) -> Int32 {
        for arc in upArcs(Int(node)) where arcs[arc].other == head { return arcs[arc].middle }
        preconditionFailure("no up arc \(node) → \(head)")
    }

    /// The down arc into slot `node` from slot `tail`'s middle.
    func downMiddle(into node: Int32, from tail: Int32) -> Int32 {
        for arc in downArcs(Int(node)) where arcs[arc].other == tail { return arcs[arc].middle }
        preconditionFailure("no down arc \(tail) → \(node)")
    }

    /// Appends the original nodes (directed road edges) of the arc between slots `tail → head` (whose middle slot is
    /// `middle`) after `tail` to `path`.
    func unpack(tail: Int32, head: Int32, middle: Int32, into path: inout [Int32]) {
        // An explicit stack of arcs still to expand, the next one on top.
        var stack: [(tail: Int32, head: Int32, middle: Int32)] = [(tail, head, middle)]
        while let arc = stack.popLast() {
            if arc.middle < 0 {
                path.append(nodeAtSlot[Int(arc.head)])
                continue
            }
            let m = arc.middle
            stack.append((m, arc.head, upMiddle(from: m, to: arc.head)))
            stack.append((arc.tail, m, downMiddle(into: m, from: arc.tail)))
        }
    }

    private static func flatten(_ lists: [[DynamicArc]]) -> Arcs {
        var first = [Int32](repeating: 0, count: lists.count + 1)
        let total = lists.reduce(0) { $0 + $1.count }
        var node = [Int32](), weight = [Int32](), length = [Float](), middle = [Int32]()
        node.reserveCapacity(total); weight.reserveCapacity(total); length.reserveCapacity(total);
        middle.reserveCapacity(total)
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
        return Arcs(first: first, other: node, weight: weight, length: length, middle: middle)
    }
}
