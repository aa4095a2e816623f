#if _endian(big)
#error("RoadGraphFile copies arrays as little-endian bytes; a big-endian host needs byte swapping here")
#endif

extension RoadGraphFile {
    /// The file's bytes for `network` and `metadata`, with the router's turn graph and hierarchy when given (both
    /// built from `network`).
    public static func encode(
        _ network: RoadNetwork, metadata: Metadata = Metadata(),
        routing: (graph: EdgeBasedGraph, hierarchy: ContractionHierarchy)? = nil
    ) -> [UInt8] {
        var sections: [(Section, [UInt8])] = []
        var meta = ByteWriter()
        meta.string(metadata.profileName)
        meta.u8(metadata.drivingSide == .right ? 0 : 1)
        meta.f64(metadata.uTurnThresholdDegrees)
        meta.f64(metadata.uTurnSeconds)
        meta.u32(UInt32(metadata.turnCostTable.count))
        for row in metadata.turnCostTable {
            meta.f64(row.degrees); meta.f64(row.nearSideSeconds); meta.f64(row.farSideSeconds)
        }
        meta.u32(UInt32(metadata.build.count))
        for (key, value) in metadata.build.sorted(by: { $0.key < $1.key }) { meta.string(key); meta.string(value) }
        sections.append((.metadata, meta.bytes))

        var nodes = ByteWriter()
        nodes.u64(UInt64(network.nodeCount))
        nodes.array(network.nodeIDs); nodes.array(network.nodeLats); nodes.array(network.nodeLons)
        nodes.array(network.nodeDelaySeconds)
        sections.append((.nodes, nodes.bytes))

        var edges = ByteWriter()
        edges.u64(UInt64(network.edgeCount))
        edges.array(network.edgeFrom); edges.array(network.edgeTo)
        edges.array(network.edgeLengthMeters); edges.array(network.edgeDurationSeconds)
        edges.array(network.edgeNameIndex); edges.array(network.edgeRoadClass)
        sections.append((.edges, edges.bytes))

        var geometry = ByteWriter()
        geometry.u64(UInt64(network.geometryStart.count))
        geometry.u64(UInt64(network.geometryLats.count))
        geometry.array(network.geometryStart); geometry.array(network.geometryLats);
        geometry.array(network.geometryLons)
        sections.append((.geometry, geometry.bytes))

        var names = ByteWriter()
        let utf8 = network.names.map { Array($0.utf8) }
        names.u64(UInt64(utf8.count))
        var end: UInt64 = 0
        for name in utf8 { end += UInt64(name.count); names.u64(end) }
        for name in utf8 { names.bytes.append(contentsOf: name) }
        sections.append((.names, names.bytes))

        var restrictions = ByteWriter()
        restrictions.u64(UInt64(network.restrictions.count))
        restrictions.array(network.restrictions.map(\.fromEdge))
        restrictions.array(network.restrictions.map(\.viaNode))
        restrictions.array(network.restrictions.map(\.toEdge))
        restrictions.array(network.restrictions.map { $0.kind == .no ? UInt8(0) : 1 })
        sections.append((.restrictions, restrictions.bytes))

        // Per-edge flags (1 destination only, 2 roundabout), written only when some edge has one, so a file
        // without any reads as before.
        let flags = (0..<network.edgeCount).map {
            (network.edgeIsDestinationOnly[$0] ? UInt8(1) : 0) | (network.edgeIsRoundabout[$0] ? 2 : 0)
        }
        if flags.contains(where: { $0 != 0 }) {
            var access = ByteWriter()
            access.u64(UInt64(network.edgeCount))
            access.array(flags)
            sections.append((.access, access.bytes))
        }

        if let routing {
            precondition(
                routing.graph.nodeCount == network.edgeCount && routing.hierarchy.nodeCount == network.edgeCount,
                "the turn graph and hierarchy must be built from this network")
            sections.append((.turnGraph, encodeTurnGraph(routing.graph)))
            sections.append((.hierarchy, encodeHierarchy(routing.hierarchy)))
        }

        return assemble(sections.map { ($0.0.tag, $0.1) })
    }

    /// Header, section table and sections, each section 8-byte aligned; `tagged` is (tag, bytes) in file order.
    static func assemble(_ tagged: [(tag: UInt32, bytes: [UInt8])]) -> [UInt8] {
        let tableEnd = headerSize + tableEntrySize * tagged.count
        var offsets: [Int] = []
        var cursor = tableEnd
        for section in tagged {
            offsets.append(cursor)
            cursor = (cursor + section.bytes.count + 7) & ~7
        }
        var file = ByteWriter()
        file.bytes.reserveCapacity(cursor)
        file.bytes.append(contentsOf: magic)
        file.u32(version)
        file.u32(UInt32(tagged.count))
        file.u64(UInt64(cursor))
        file.u32(0)  // header checksum, filled in below
        file.u32(0)  // section table checksum, filled in below
        for (index, section) in tagged.enumerated() {
            file.u32(section.tag)
            file.u32(0)
            file.u64(UInt64(offsets[index]))
            file.u64(UInt64(section.bytes.count))
            file.u32(section.bytes.withUnsafeBytes { CRC32.checksum($0) })
            file.u32(0)
        }
        for (index, section) in tagged.enumerated() {
            file.bytes.append(contentsOf: [UInt8](repeating: 0, count: offsets[index] - file.bytes.count))
            file.bytes.append(contentsOf: section.bytes)
        }
        file.bytes.append(contentsOf: [UInt8](repeating: 0, count: cursor - file.bytes.count))
        let tableCRC = file.bytes.withUnsafeBytes {
            CRC32.checksum(UnsafeRawBufferPointer(rebasing: $0[headerSize..<tableEnd]))
        }
        withUnsafeBytes(of: tableCRC.littleEndian) { file.bytes.replaceSubrange(28..<32, with: $0) }
        let headerCRC = file.bytes.withUnsafeBytes {
            CRC32.checksum(UnsafeRawBufferPointer(rebasing: $0[0..<headerSize]))
        }
        withUnsafeBytes(of: headerCRC.littleEndian) { file.bytes.replaceSubrange(24..<28, with: $0) }
        return file.bytes
    }
}

/// Appends little-endian values to a byte array.
struct ByteWriter {
    var bytes: [UInt8] = []

    mutating func u8(_ value: UInt8) { bytes.append(value) }
    mutating func u32(_ value: UInt32) { withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) } }
    mutating func u64(_ value: UInt64) { withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) } }
    mutating func f64(_ value: Double) { u64(value.bitPattern) }

    /// A `UInt32` byte count and the UTF-8 bytes.
    mutating func string(_ value: String) {
        let utf8 = Array(value.utf8)
        u32(UInt32(utf8.count))
        bytes.append(contentsOf: utf8)
    }

    /// The elements' bytes as they lie in memory (little-endian on every host this builds for).
    mutating func array<T: BitwiseCopyable>(_ values: [T]) {
        values.withUnsafeBytes { bytes.append(contentsOf: $0) }
    }
}
