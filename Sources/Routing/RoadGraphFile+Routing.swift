import Foundation

/// The router's prebuilt parts in the graph file, so a server starts without contracting.
///
/// `TURN`, the edge-based turn graph (n = the network's directed edges, a = turns): `UInt64` n, `UInt64` a, then
/// `Int32` edge weight (deciseconds) ×n, `Float32` edge length (m) ×n, `Int32` first turn ×(n+1), `Int32` turn head ×a,
/// `Int32` turn weight ×a, `Float32` turn length ×a. The per-node departure and arrival lists are rebuilt from `EDGE`.
///
/// `CHIE`, its contraction hierarchy (u up arcs, d down arcs): `UInt64` n, `UInt64` shortcuts, `UInt64` u, `UInt64` d,
/// then `Int32` rank ×n, `Int32` up first ×(n+1), `Int32` up head ×u, `Int32` up weight ×u, `Float32` up length ×u,
/// `Int32` up middle ×u, and the same five arrays for the down arcs (first, tail, weight, length, middle).
extension RoadGraphFile {
    /// A graph file ready to route on: the network, the turn graph and the hierarchy, and how they were obtained.
    public struct Loaded: Sendable {
        /// The road network.
        public var network: RoadNetwork
        /// The profile and build metadata.
        public var metadata: Metadata
        /// The edge-based turn graph.
        public var graph: EdgeBasedGraph
        /// The contraction hierarchy over `graph`.
        public var hierarchy: ContractionHierarchy
        /// Whether the hierarchy came from the file (false: the file had none and it was built at load).
        public var hierarchyWasStored: Bool
    }

    /// The graph file at `path` with its turn graph and hierarchy; a file written without them (an older build)
    /// still loads, and they are built here, which `log` reports.
    public static func load(_ path: String, log: (String) -> Void = { _ in }) throws(RoadGraphFileError) -> Loaded {
        let contents = try readContents(path)
        if let graph = contents.graph, let hierarchy = contents.hierarchy {
            return Loaded(
                network: contents.network, metadata: contents.metadata, graph: graph, hierarchy: hierarchy,
                hierarchyWasStored: true)
        }
        log("\(path) has no stored contraction hierarchy (written by an older enroute); building it now")
        let graph = EdgeBasedGraph(network: contents.network)
        let hierarchy = ContractionHierarchy(graph: graph)
        return Loaded(
            network: contents.network, metadata: contents.metadata, graph: graph, hierarchy: hierarchy,
            hierarchyWasStored: false)
    }

    static func encodeTurnGraph(_ graph: EdgeBasedGraph) -> [UInt8] {
        var writer = ByteWriter()
        writer.bytes.reserveCapacity(16 + graph.nodeCount * 12 + graph.arcCount * 12 + 4)
        writer.u64(UInt64(graph.nodeCount)); writer.u64(UInt64(graph.arcCount))
        writer.array(graph.edgeWeight); writer.array(graph.edgeLength); writer.array(graph.firstArc)
        writer.array(graph.arcHead); writer.array(graph.arcWeight); writer.array(graph.arcLength)
        return writer.bytes
    }

    static func encodeHierarchy(_ hierarchy: ContractionHierarchy) -> [UInt8] {
        var writer = ByteWriter()
        let up = hierarchy.upArcCount, down = hierarchy.downArcCount
        writer.bytes.reserveCapacity(32 + hierarchy.nodeCount * 12 + (up + down) * 16 + 8)
        writer.u64(UInt64(hierarchy.nodeCount)); writer.u64(UInt64(hierarchy.shortcutCount))
        writer.u64(UInt64(up)); writer.u64(UInt64(down))
        writer.array(hierarchy.rank)
        // By node, as files have always kept them (the search's slots follow from the rank).
        let (upArcs, downArcs) = hierarchy.arcsByNode()
        writer.array(upArcs.first); writer.array(upArcs.other); writer.array(upArcs.weight)
        writer.array(upArcs.length); writer.array(upArcs.middle)
        writer.array(downArcs.first); writer.array(downArcs.other); writer.array(downArcs.weight)
        writer.array(downArcs.length); writer.array(downArcs.middle)
        return writer.bytes
    }

    static func decodeTurnGraph(
        _ section: ByteReader, network: RoadNetwork
    ) throws(RoadGraphFileError) -> EdgeBasedGraph {
        var reader = section
        let count = Int(try reader.u64())
        guard count == network.edgeCount else {
            throw reader.invalid("\(count) nodes for a network of \(network.edgeCount) directed edges")
        }
        let arcs = try reader.count(elementSize: 12, limit: Int(Int32.max))
        guard count <= (reader.bytes.count - reader.offset) / 12 else {
            throw reader.invalid("\(count) nodes do not fit")
        }
        let edgeWeight: [Int32] = try reader.array(count)
        let edgeLength: [Float] = try reader.array(count)
        let firstArc: [Int32] = try reader.array(count + 1)
        let arcHead: [Int32] = try reader.array(arcs)
        let arcWeight: [Int32] = try reader.array(arcs)
        let arcLength: [Float] = try reader.array(arcs)
        try reader.finish()
        try checkCSR(firstArc, total: arcs, in: reader, what: "turns")
        if let bad = edgeWeight.firstIndex(where: { $0 < 1 }) {
            throw reader.invalid("edge \(bad) weighs \(edgeWeight[bad])")
        }
        if let bad = arcHead.firstIndex(where: { $0 < 0 || Int($0) >= count }) {
            throw reader.invalid("turn \(bad) leads to \(arcHead[bad]), outside 0..<\(count)")
        }
        if let bad = arcWeight.firstIndex(where: { $0 < 0 }) {
            throw reader.invalid("turn \(bad) weighs \(arcWeight[bad])")
        }
        if let bad = edgeLength.firstIndex(where: { !($0.isFinite && $0 >= 0) })
            ?? arcLength.firstIndex(where: { !($0.isFinite && $0 >= 0) })
        {
            throw reader.invalid("length \(bad) is not a finite non-negative number")
        }
        return EdgeBasedGraph(
            network: network, edgeWeight: edgeWeight, edgeLength: edgeLength, firstArc: firstArc, arcHead: arcHead,
            arcWeight: arcWeight, arcLength: arcLength)
    }

    static func decodeHierarchy(
        _ section: ByteReader, graph: EdgeBasedGraph
    ) throws(RoadGraphFileError) -> ContractionHierarchy {
        var reader = section
        let count = Int(try reader.u64())
        guard count == graph.nodeCount else {
            throw reader.invalid("\(count) nodes for a turn graph of \(graph.nodeCount)")
        }
        let shortcuts = Int(try reader.u64())
        let up = try reader.count(elementSize: 16, limit: Int(Int32.max))
        let down = try reader.count(elementSize: 16, limit: Int(Int32.max))
        guard count <= (reader.bytes.count - reader.offset) / 12 else {
            throw reader.invalid("\(count) nodes do not fit")
        }
        let rank: [Int32] = try reader.array(count)
        let upFirst: [Int32] = try reader.array(count + 1)
        let upHead: [Int32] = try reader.array(up), upWeight: [Int32] = try reader.array(up)
        let upLength: [Float] = try reader.array(up), upMiddle: [Int32] = try reader.array(up)
        let downFirst: [Int32] = try reader.array(count + 1)
        let downTail: [Int32] = try reader.array(down), downWeight: [Int32] = try reader.array(down)
        let downLength: [Float] = try reader.array(down), downMiddle: [Int32] = try reader.array(down)
        try reader.finish()
        guard shortcuts <= up + down else { throw reader.invalid("\(shortcuts) shortcuts among \(up + down) arcs") }
        // The rank is a permutation; every arc leads to a higher rank and bypasses a lower one (or none), so
        // unpacking a shortcut always ends.
        var seen = [Bool](repeating: false, count: count)
        for node in 0..<count {
            let position = Int(rank[node])
            guard position >= 0, position < count, !seen[position] else {
                throw reader.invalid("node \(node)'s rank \(position) is outside 0..<\(count) or repeated")
            }
            seen[position] = true
        }
        try checkCSR(upFirst, total: up, in: reader, what: "up arcs")
        try checkCSR(downFirst, total: down, in: reader, what: "down arcs")
        for (first, other, weight, length, middle, what) in [
            (upFirst, upHead, upWeight, upLength, upMiddle, "up"),
            (downFirst, downTail, downWeight, downLength, downMiddle, "down"),
        ] {
            for node in 0..<count {
                let mine = rank[node]
                for arc in Int(first[node])..<Int(first[node + 1]) {
                    let end = other[arc], via = middle[arc]
                    guard end >= 0, Int(end) < count, rank[Int(end)] > mine else {
                        throw reader.invalid(
                            "\(what) arc \(arc) of node \(node) leads to \(end), not a higher-ranked node")
                    }
                    guard via == -1 || (via >= 0 && Int(via) < count && rank[Int(via)] < mine) else {
                        throw reader.invalid(
                            "\(what) arc \(arc) of node \(node) bypasses \(via), not a lower-ranked node")
                    }
                    guard weight[arc] >= 0, length[arc].isFinite, length[arc] >= 0 else {
                        throw reader.invalid("\(what) arc \(arc) has weight \(weight[arc]) and length \(length[arc])")
                    }
                }
            }
        }
        return ContractionHierarchy(
            nodeCount: count, rank: rank,
            up: .init(first: upFirst, other: upHead, weight: upWeight, length: upLength, middle: upMiddle),
            down: .init(first: downFirst, other: downTail, weight: downWeight, length: downLength, middle: downMiddle),
            shortcutCount: shortcuts)
    }

    /// Throws unless `first` starts at 0, never decreases and ends at `total`.
    private static func checkCSR(
        _ first: [Int32], total: Int, in reader: ByteReader, what: String
    ) throws(RoadGraphFileError) {
        guard first.first == 0, Int(first.last ?? -1) == total else {
            throw reader.invalid(
                "the \(what)' offsets run \(first.first ?? -1)...\(first.last ?? -1), not 0...\(total)")
        }
        for index in 1..<first.count where first[index] < first[index - 1] {
            throw reader.invalid("the \(what)' offsets decrease at node \(index - 1)")
        }
    }
}
