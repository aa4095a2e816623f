/// An arc of the graph being contracted: the other end, its weight and length, the bypassed node or -1, and the
/// number of original turns it stands for.
struct DynamicArc {
    var node: Int32
    var weight: Int32
    var length: Float
    var middle: Int32
    var originals: Int32
}

/// The contraction itself: a dynamic graph of the nodes not yet contracted, shrinking in rounds.
///
/// Each round contracts an independent set of the remaining nodes (every node whose priority is below all its
/// remaining neighbours', ties broken by a hash), then re-estimates only the neighbours of the nodes contracted.
/// A contracted node's arcs leave its neighbours' lists, so searches only ever see the remaining graph. Witness
/// searches are bounded (settled nodes, hops, distance) and reuse one timestamped state; a missed witness only
/// adds a needless shortcut, never a wrong distance.
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
    private var priority: [Int]
    private var contracted: [Bool]
    private var cachedShortcutTerms: [Int]
    private var estimatedDegree: [Int32]
    private var stale: [Int32]

    // Witness search state, reused.
    private let witness: WitnessState
    private var pending: [(tail: Int32, head: Int32, weight: Int32, length: Float, originals: Int32)] = []
    private var targetStamp: [UInt32]
    private var targetEpoch: UInt32 = 0
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
                let dynamic = DynamicArc(
                    node: head, weight: graph.arcWeight[arc], length: graph.arcLength[arc], middle: -1, originals: 1)
                if let existing = out[tail].firstIndex(where: { $0.node == head }) {
                    if dynamic.weight < out[tail][existing].weight {
                        out[tail][existing] = dynamic
                        let back = into[Int(head)].firstIndex { $0.node == Int32(tail) }!
                        into[Int(head)][back].weight = dynamic.weight
                        into[Int(head)][back].length = dynamic.length
                    }
                    continue
                }
                out[tail].append(dynamic)
                into[Int(head)].append(
                    DynamicArc(
                        node: Int32(tail), weight: dynamic.weight, length: dynamic.length, middle: -1, originals: 1))
            }
        }
        finalUp = [[DynamicArc]](repeating: [], count: count)
        finalDown = [[DynamicArc]](repeating: [], count: count)
        rank = [Int32](repeating: -1, count: count)
        deletedNeighbours = [Int32](repeating: 0, count: count)
        level = [Int32](repeating: 0, count: count)
        priority = [Int](repeating: 0, count: count)
        contracted = [Bool](repeating: false, count: count)
        cachedShortcutTerms = [Int](repeating: 0, count: count)
        estimatedDegree = [Int32](repeating: 0, count: count)
        stale = [Int32](repeating: 0, count: count)
        witness = WitnessState(capacity: count)
        neighbourStamp = [UInt32](repeating: 0, count: count)
        targetStamp = [UInt32](repeating: 0, count: count)
    }

    mutating func contractAll() {
        let count = rank.count
        for node in 0..<count { priority[node] = estimate(Int32(node)) }
        var remaining = (0..<Int32(count)).map { $0 }
        var selected: [Int32] = [], touched: [Int32] = []
        var order: Int32 = 0
        while !remaining.isEmpty {
            selected.removeAll(keepingCapacity: true)
            for node in remaining where isLocalMinimum(node) { selected.append(node) }
            neighbourEpoch &+= 1
            touched.removeAll(keepingCapacity: true)
            for node in selected {
                contract(node, touched: &touched)
                rank[Int(node)] = order
                order += 1
            }
            remaining.removeAll { contracted[Int($0)] }
            for node in touched where !contracted[Int(node)] {
                let index = Int(node)
                // A node whose degree barely moved since its last simulation keeps its cached shortcut terms; only
                // the cheap terms change (an approximate priority orders worse but never breaks exactness).
                let degree = Int32(out[index].count + into[index].count)
                stale[index] += 1
                if stale[index] < options.maxStaleness,
                    abs(degree - estimatedDegree[index]) * 4 <= estimatedDegree[index]
                {
                    priority[index] = combine(index)
                } else {
                    priority[index] = estimate(node)
                }
            }
        }
    }

    /// Contracts every node in the order `rank` gives (0 first), with full witness searches and no priorities.
    mutating func contract(inOrderOf rank: [Int32]) {
        var order = [Int32](repeating: 0, count: rank.count)
        for (node, position) in rank.enumerated() { order[Int(position)] = Int32(node) }
        var touched: [Int32] = []
        for (position, node) in order.enumerated() {
            neighbourEpoch &+= 1
            touched.removeAll(keepingCapacity: true)
            contract(node, touched: &touched)
            self.rank[Int(node)] = Int32(position)
        }
    }

    /// Whether `node` comes before every remaining neighbour: lower priority, ties broken by a hash of the ids.
    private func isLocalMinimum(_ node: Int32) -> Bool {
        let index = Int(node), mine = priority[index], myHash = Self.tieBreak(node)
        for list in [out[index], into[index]] {
            for arc in list {
                let other = Int(arc.node), theirs = priority[other]
                if theirs < mine || (theirs == mine && (Self.tieBreak(arc.node), arc.node) < (myHash, node)) {
                    return false
                }
            }
        }
        return true
    }

    @inline(__always) private static func tieBreak(_ node: Int32) -> UInt32 {
        UInt32(bitPattern: node) &* 0x9E37_79B1
    }

    /// Edge difference, deleted neighbours, original turns added minus removed, and level, weighted.
    private mutating func estimate(_ node: Int32) -> Int {
        findShortcuts(of: node, settleLimit: options.estimateSettleLimit, hopLimit: options.estimateHopLimit)
        let index = Int(node)
        let removed = out[index].count + into[index].count
        var originalsRemoved = 0, originalsAdded = 0
        for arc in out[index] { originalsRemoved += Int(arc.originals) }
        for arc in into[index] { originalsRemoved += Int(arc.originals) }
        for shortcut in pending { originalsAdded += Int(shortcut.originals) }
        let edgeDifference = pending.count - removed
        cachedShortcutTerms[index] = 4 * edgeDifference + (originalsAdded - originalsRemoved)
        estimatedDegree[index] = Int32(removed)
        stale[index] = 0
        return combine(index)
    }

    /// The priority from the cached shortcut terms and the current deleted-neighbour count and level.
    private func combine(_ index: Int) -> Int {
        cachedShortcutTerms[index] + 2 * Int(deletedNeighbours[index]) + Int(level[index])
    }

    private mutating func contract(_ node: Int32, touched: inout [Int32]) {
        findShortcuts(of: node, settleLimit: options.witnessSettleLimit, hopLimit: options.witnessHopLimit)
        let index = Int(node)
        contracted[index] = true
        let outgoing = out[index], incoming = into[index]
        out[index] = []
        into[index] = []
        finalUp[index] = outgoing
        finalDown[index] = incoming
        for arc in outgoing { into[Int(arc.node)].removeAll { $0.node == node } }
        for arc in incoming { out[Int(arc.node)].removeAll { $0.node == node } }
        for shortcut in pending {
            addArc(
                tail: shortcut.tail, head: shortcut.head, weight: shortcut.weight, length: shortcut.length,
                middle: node,
                originals: shortcut.originals)
        }
        for list in [outgoing, incoming] {
            for arc in list {
                let neighbour = Int(arc.node)
                deletedNeighbours[neighbour] += 1
                level[neighbour] = max(level[neighbour], level[index] + 1)
                if neighbourStamp[neighbour] != neighbourEpoch {
                    neighbourStamp[neighbour] = neighbourEpoch
                    touched.append(arc.node)
                }
            }
        }
    }

    private mutating func addArc(
        tail: Int32, head: Int32, weight: Int32, length: Float, middle: Int32, originals: Int32
    ) {
        let arc = DynamicArc(node: head, weight: weight, length: length, middle: middle, originals: originals)
        if let existing = out[Int(tail)].firstIndex(where: { $0.node == head }) {
            guard weight < out[Int(tail)][existing].weight else { return }
            out[Int(tail)][existing] = arc
            let back = into[Int(head)].firstIndex { $0.node == tail }!
            into[Int(head)][back] = DynamicArc(
                node: tail, weight: weight, length: length, middle: middle, originals: originals)
            return
        }
        out[Int(tail)].append(arc)
        into[Int(head)].append(
            DynamicArc(node: tail, weight: weight, length: length, middle: middle, originals: originals))
        shortcutCount += 1
    }

    /// Fills `pending` with the shortcuts contracting `node` needs: each in-arc and out-arc pair whose path through
    /// `node` has no witness at most as short (a bounded search may miss a witness, adding a needless shortcut).
    private mutating func findShortcuts(of node: Int32, settleLimit: Int, hopLimit: Int) {
        pending.removeAll(keepingCapacity: true)
        let index = Int(node)
        let outgoing = out[index], incoming = into[index]
        guard !outgoing.isEmpty else { return }
        var maxOut: Int32 = 0
        for arc in outgoing { maxOut = max(maxOut, arc.weight) }
        for arcIn in incoming {
            let source = arcIn.node
            // The search may stop once it has settled every head it could be a witness for.
            targetEpoch &+= 1
            var targets = 0
            for arcOut in outgoing where arcOut.node != source && targetStamp[Int(arcOut.node)] != targetEpoch {
                targetStamp[Int(arcOut.node)] = targetEpoch
                targets += 1
            }
            guard targets > 0 else { continue }
            witnessSearch(
                from: source, avoiding: node, limit: Int(arcIn.weight) + Int(maxOut), targets: targets,
                settleLimit: settleLimit,
                hopLimit: hopLimit)
            for arcOut in outgoing where arcOut.node != source {
                let through = Int(arcIn.weight) + Int(arcOut.weight)
                let head = Int(arcOut.node)
                if witness.reached(head), witness.distance[head] <= through { continue }
                pending.append(
                    (
                        source, arcOut.node, Int32(through), arcIn.length + arcOut.length,
                        arcIn.originals + arcOut.originals
                    ))
            }
        }
    }

    private mutating func witnessSearch(
        from source: Int32, avoiding avoided: Int32, limit: Int, targets: Int, settleLimit: Int,
        hopLimit: Int
    ) {
        let w = witness
        w.begin()
        w.relax(source, key: 0, hopCount: 0)
        var settled = 0, remaining = targets
        let hopLimit = Int32(hopLimit)
        while !w.isEmpty {
            let (node, key) = w.popMin()
            if key > limit { break }
            if targetStamp[Int(node)] == targetEpoch {
                remaining -= 1
                if remaining == 0 { break }
            }
            settled += 1
            if settled > settleLimit { break }
            let hops = w.hops[Int(node)] + 1
            if hops > hopLimit { continue }
            out[Int(node)].withUnsafeBufferPointer { arcs in
                for arc in arcs where arc.node != avoided {
                    w.relax(arc.node, key: key + Int(arc.weight), hopCount: hops)
                }
            }
        }
    }
}
