extension RoadGraphFile {
    /// The network and metadata in `bytes`, every length, checksum, value and index checked first.
    public static func decode(_ bytes: UnsafeRawBufferPointer) throws(RoadGraphFileError) -> Contents {
        let sections = try sectionTable(bytes)
        func body(_ section: Section) throws(RoadGraphFileError) -> ByteReader {
            guard let range = sections[section.tag] else { throw .missingSection(section.name) }
            return ByteReader(bytes: UnsafeRawBufferPointer(rebasing: bytes[range]), section: section.name)
        }

        var meta = try body(.metadata)
        let profileName = try meta.string()
        guard !profileName.isEmpty else { throw meta.invalid("the profile name is empty") }
        let side = try meta.u8()
        guard side <= 1 else { throw meta.invalid("driving side \(side) is neither 0 (right) nor 1 (left)") }
        var metadata = Metadata(profileName: profileName, drivingSide: side == 0 ? .right : .left)
        metadata.uTurnThresholdDegrees = try meta.f64()
        metadata.uTurnSeconds = try meta.f64()
        guard metadata.uTurnThresholdDegrees.isFinite, metadata.uTurnSeconds.isFinite, metadata.uTurnSeconds >= 0 else {
            throw meta.invalid("the U-turn threshold or cost is not a finite non-negative number")
        }
        let rows = try meta.count(u32: true, elementSize: 24)
        metadata.turnCostTable = []
        for _ in 0..<rows {
            let row = Metadata.TurnCostRow(
                degrees: try meta.f64(), nearSideSeconds: try meta.f64(), farSideSeconds: try meta.f64())
            guard row.degrees.isFinite, row.nearSideSeconds.isFinite, row.farSideSeconds.isFinite,
                row.degrees >= (metadata.turnCostTable.last?.degrees ?? 0)
            else {
                throw meta.invalid("the turn-cost table is not ascending finite numbers")
            }
            metadata.turnCostTable.append(row)
        }
        let facts = try meta.count(u32: true, elementSize: 8)
        for _ in 0..<facts {
            let key = try meta.string()
            metadata.build[key] = try meta.string()
        }
        try meta.finish()

        var nodes = try body(.nodes)
        let nodeCount = try nodes.count(elementSize: 32, limit: Int(Int32.max))
        let nodeIDs: [Int64] = try nodes.array(nodeCount)
        let nodeLats: [Double] = try nodes.array(nodeCount)
        let nodeLons: [Double] = try nodes.array(nodeCount)
        let delays: [Double] = try nodes.array(nodeCount)
        try nodes.finish()
        try checkCoordinates(nodeLats, nodeLons, in: nodes, what: "node")
        if let bad = delays.firstIndex(where: { !($0.isFinite && $0 >= 0) }) {
            throw nodes.invalid("node \(bad) has delay \(delays[bad]) s")
        }

        var names = try body(.names)
        let nameCount = try names.count(elementSize: 8, limit: Int(Int32.max))
        guard nameCount >= 1 else { throw names.invalid("there is no name at all (index 0 must be the empty name)") }
        let ends: [UInt64] = try names.array(nameCount)
        let text = names.rest()
        var nameList: [String] = []
        nameList.reserveCapacity(nameCount)
        var seen = Set<String>()
        var start = 0
        for (index, end) in ends.enumerated() {
            guard end >= UInt64(start), end <= UInt64(text.count) else {
                throw names.invalid("name \(index) ends at byte \(end), outside \(start)...\(text.count)")
            }
            guard let name = String(validating: UnsafeRawBufferPointer(rebasing: text[start..<Int(end)]), as: UTF8.self)
            else {
                throw names.invalid("name \(index) is not UTF-8")
            }
            guard seen.insert(name).inserted else { throw names.invalid("name \(index) '\(name)' appears twice") }
            nameList.append(name)
            start = Int(end)
        }
        guard nameList[0].isEmpty else { throw names.invalid("name 0 is '\(nameList[0])', not the empty name") }
        guard start == text.count else { throw names.invalid("\(text.count - start) bytes after the last name") }

        var edges = try body(.edges)
        let edgeCount = try edges.count(elementSize: 29, limit: Int(Int32.max) - 1)
        let edgeFrom: [Int32] = try edges.array(edgeCount)
        let edgeTo: [Int32] = try edges.array(edgeCount)
        let lengths: [Double] = try edges.array(edgeCount)
        let durations: [Double] = try edges.array(edgeCount)
        let nameIndex: [Int32] = try edges.array(edgeCount)
        let roadClass: [UInt8] = try edges.array(edgeCount)
        try edges.finish()
        for edge in 0..<edgeCount {
            guard edgeFrom[edge] >= 0, Int(edgeFrom[edge]) < nodeCount, edgeTo[edge] >= 0, Int(edgeTo[edge]) < nodeCount
            else {
                throw edges.invalid(
                    "edge \(edge) joins nodes \(edgeFrom[edge]) → \(edgeTo[edge]), outside 0..<\(nodeCount)")
            }
            guard lengths[edge].isFinite, lengths[edge] >= 0, durations[edge].isFinite, durations[edge] >= 0 else {
                throw edges.invalid("edge \(edge) has length \(lengths[edge]) m and duration \(durations[edge]) s")
            }
            guard nameIndex[edge] >= 0, Int(nameIndex[edge]) < nameCount else {
                throw edges.invalid("edge \(edge) names \(nameIndex[edge]), outside 0..<\(nameCount)")
            }
        }

        var geometry = try body(.geometry)
        let startCount = try geometry.count(elementSize: 4, limit: Int(Int32.max))
        guard startCount == edgeCount + 1 else {
            throw geometry.invalid("\(startCount) edge starts for \(edgeCount) edges (needs \(edgeCount + 1))")
        }
        let pointCount = try geometry.count(elementSize: 16, limit: Int(Int32.max))
        let starts: [Int32] = try geometry.array(startCount)
        let lats: [Double] = try geometry.array(pointCount)
        let lons: [Double] = try geometry.array(pointCount)
        try geometry.finish()
        guard starts[0] == 0 else { throw geometry.invalid("the first edge's geometry starts at \(starts[0]), not 0") }
        for edge in 0..<edgeCount where Int(starts[edge + 1]) - Int(starts[edge]) < 2 {
            throw geometry.invalid(
                "edge \(edge) has \(Int(starts[edge + 1]) - Int(starts[edge])) geometry points (needs at least 2)")
        }
        guard Int(starts[edgeCount]) == pointCount else {
            throw geometry.invalid(
                "the last edge's geometry ends at \(starts[edgeCount]), not at the \(pointCount) points")
        }
        try checkCoordinates(lats, lons, in: geometry, what: "point")

        var restrictions = try body(.restrictions)
        let restrictionCount = try restrictions.count(elementSize: 13, limit: Int(Int32.max))
        let fromEdges: [Int32] = try restrictions.array(restrictionCount)
        let viaNodes: [Int32] = try restrictions.array(restrictionCount)
        let toEdges: [Int32] = try restrictions.array(restrictionCount)
        let kinds: [UInt8] = try restrictions.array(restrictionCount)
        try restrictions.finish()
        var restrictionList: [TurnRestriction] = []
        restrictionList.reserveCapacity(restrictionCount)
        for index in 0..<restrictionCount {
            let from = fromEdges[index], via = viaNodes[index], to = toEdges[index]
            guard from >= 0, Int(from) < edgeCount, to >= 0, Int(to) < edgeCount else {
                throw restrictions.invalid("restriction \(index) uses edges \(from) → \(to), outside 0..<\(edgeCount)")
            }
            guard edgeTo[Int(from)] == via, edgeFrom[Int(to)] == via else {
                throw restrictions.invalid(
                    "restriction \(index)'s edges \(from) → \(to) do not meet at its via node \(via)")
            }
            guard kinds[index] <= 1 else {
                throw restrictions.invalid("restriction \(index) has kind \(kinds[index]) (0 no, 1 only)")
            }
            restrictionList.append(
                TurnRestriction(fromEdge: from, viaNode: via, toEdge: to, kind: kinds[index] == 0 ? .no : .only))
        }

        var destinationOnly = [Bool](repeating: false, count: edgeCount), roundabout = destinationOnly
        if sections[Section.access.tag] != nil {
            var access = try body(.access)
            let count = try access.count(elementSize: 1, limit: Int(Int32.max))
            guard count == edgeCount else { throw access.invalid("\(count) edge flags for \(edgeCount) edges") }
            let flags: [UInt8] = try access.array(count)
            try access.finish()
            if let bad = flags.firstIndex(where: { $0 > 3 }) {
                throw access.invalid("edge \(bad) has flags \(flags[bad]) (1 destination only, 2 roundabout)")
            }
            destinationOnly = flags.map { $0 & 1 != 0 }
            roundabout = flags.map { $0 & 2 != 0 }
        }
        let network = RoadNetwork(
            nodeIDs: nodeIDs, nodeLats: nodeLats, nodeLons: nodeLons, nodeDelaySeconds: delays,
            edgeFrom: edgeFrom, edgeTo: edgeTo, edgeLengthMeters: lengths,
            edgeDurationSeconds: durations, edgeRoadClass: roadClass, edgeNameIndex: nameIndex,
            geometryStart: starts, geometryLats: lats, geometryLons: lons, names: nameList,
            restrictions: restrictionList, turnCosts: metadata.turnCosts,
            edgeIsDestinationOnly: destinationOnly, edgeIsRoundabout: roundabout)
        var contents = Contents(network: network, metadata: metadata)
        switch (sections[Section.turnGraph.tag], sections[Section.hierarchy.tag]) {
        case (nil, nil): break
        case (.some, .some):
            let graph = try decodeTurnGraph(try body(.turnGraph), network: network)
            contents.graph = graph
            contents.hierarchy = try decodeHierarchy(try body(.hierarchy), graph: graph)
        case (.some, nil): throw .missingSection(Section.hierarchy.name)
        case (nil, .some): throw .missingSection(Section.turnGraph.name)
        }
        return contents
    }

    /// The byte range of each section by tag, after checking the magic, version, header checksum and bounds.
    static func sectionTable(_ bytes: UnsafeRawBufferPointer) throws(RoadGraphFileError) -> [UInt32: Range<Int>] {
        let prefix = min(bytes.count, magic.count)
        guard Array(bytes[0..<prefix]) == Array(magic[0..<prefix]) else { throw .notAGraphFile }
        guard bytes.count >= 12 else { throw .truncated(section: "header", detail: "the file is \(bytes.count) bytes") }
        let found = bytes.u32(at: 8)
        guard found == version else { throw .unsupportedVersion(found: found, supported: version) }
        guard bytes.count >= headerSize else {
            throw .truncated(
                section: "header", detail: "the file is \(bytes.count) bytes, the header alone is \(headerSize)")
        }
        var crc = CRC32.checksum(UnsafeRawBufferPointer(rebasing: bytes[0..<24]))
        crc = withUnsafeBytes(of: UInt32(0)) { CRC32.checksum($0, continuing: crc) }
        crc = CRC32.checksum(UnsafeRawBufferPointer(rebasing: bytes[28..<headerSize]), continuing: crc)
        guard crc == bytes.u32(at: 24) else { throw .checksumMismatch(section: "header") }
        let count = Int(bytes.u32(at: 12))
        let declaredLength = bytes.u64(at: 16)
        guard declaredLength == UInt64(bytes.count) else {
            throw .truncated(
                section: "file", detail: "the file is \(bytes.count) bytes, its header says \(declaredLength)")
        }
        guard count <= (bytes.count - headerSize) / tableEntrySize else {
            throw .truncated(section: "section table", detail: "\(count) entries do not fit in \(bytes.count) bytes")
        }
        let tableEnd = headerSize + count * tableEntrySize
        guard CRC32.checksum(UnsafeRawBufferPointer(rebasing: bytes[headerSize..<tableEnd])) == bytes.u32(at: 28) else {
            throw .checksumMismatch(section: "section table")
        }

        var ranges: [UInt32: Range<Int>] = [:]
        for index in 0..<count {
            let entry = headerSize + index * tableEntrySize
            let tag = bytes.u32(at: entry)
            let name = Section.allCases.first { $0.tag == tag }?.name ?? "section '\(tagText(tag))'"
            let offset = bytes.u64(at: entry + 8), length = bytes.u64(at: entry + 16)
            guard offset >= UInt64(tableEnd), offset <= UInt64(bytes.count), length <= UInt64(bytes.count) - offset
            else {
                throw .truncated(
                    section: name,
                    detail: "bytes \(offset)..<\(offset &+ length) lie outside \(tableEnd)..<\(bytes.count)")
            }
            let range = Int(offset)..<Int(offset + length)
            guard CRC32.checksum(UnsafeRawBufferPointer(rebasing: bytes[range])) == bytes.u32(at: entry + 24) else {
                throw .checksumMismatch(section: name)
            }
            guard ranges.updateValue(range, forKey: tag) == nil else {
                throw .invalid(section: "section table", detail: "two \(name) sections")
            }
        }
        // Only zero padding may lie outside the sections, so every byte of the file is checked by some checksum.
        var covered = tableEnd
        for range in ranges.values.sorted(by: { $0.lowerBound < $1.lowerBound }) {
            if range.lowerBound > covered, let stray = bytes[covered..<range.lowerBound].firstIndex(where: { $0 != 0 })
            {
                throw .invalid(section: "file", detail: "byte \(stray) between sections is not zero padding")
            }
            covered = max(covered, range.upperBound)
        }
        if let stray = bytes[covered...].firstIndex(where: { $0 != 0 }) {
            throw .invalid(section: "file", detail: "byte \(stray) after the last section is not zero padding")
        }
        return ranges
    }

    static func tagText(_ tag: UInt32) -> String {
        let scalars = (0..<4).map { UInt8(truncatingIfNeeded: tag >> (8 * $0)) }
        return scalars.allSatisfy { $0 >= 0x20 && $0 < 0x7F }
            ? String(decoding: scalars, as: UTF8.self) : "0x" + String(tag, radix: 16)
    }

    static func checkCoordinates(
        _ lats: [Double], _ lons: [Double], in reader: ByteReader,
        what: String
    ) throws(RoadGraphFileError) {
        for index in lats.indices where !((-90.0...90).contains(lats[index]) && (-180.0...180).contains(lons[index])) {
            throw reader.invalid("\(what) \(index) is at (\(lats[index]), \(lons[index])), not a WGS 84 position")
        }
    }
}

/// Reads little-endian values from one section, throwing errors that name it.
struct ByteReader {
    let bytes: UnsafeRawBufferPointer
    let section: String
    var offset = 0

    init(bytes: UnsafeRawBufferPointer, section: String) {
        self.bytes = bytes
        self.section = section
    }

    func invalid(_ detail: String) -> RoadGraphFileError { .invalid(section: section, detail: detail) }

    mutating func take(_ size: Int) throws(RoadGraphFileError) -> Int {
        guard size <= bytes.count - offset else {
            throw .truncated(section: section, detail: "needs \(size) more bytes at byte \(offset) of \(bytes.count)")
        }
        defer { offset += size }
        return offset
    }

    mutating func u8() throws(RoadGraphFileError) -> UInt8 { bytes[try take(1)] }
    mutating func u32() throws(RoadGraphFileError) -> UInt32 { bytes.u32(at: try take(4)) }
    mutating func u64() throws(RoadGraphFileError) -> UInt64 { bytes.u64(at: try take(8)) }
    mutating func f64() throws(RoadGraphFileError) -> Double { Double(bitPattern: try u64()) }

    /// A count (`UInt64`, or `UInt32` when `u32`) whose elements of at least `elementSize` bytes fit in what is left.
    mutating func count(u32: Bool = false, elementSize: Int, limit: Int = Int.max) throws(RoadGraphFileError) -> Int {
        let value = u32 ? UInt64(try self.u32()) : try u64()
        guard value <= UInt64(limit), value <= UInt64((bytes.count - offset) / elementSize) else {
            throw .truncated(
                section: section,
                detail: "\(value) entries do not fit in the section's \(bytes.count - offset) remaining bytes")
        }
        return Int(value)
    }

    /// A `UInt32` byte count and that many bytes of UTF-8.
    mutating func string() throws(RoadGraphFileError) -> String {
        let length = Int(try u32())
        let start = try take(length)
        guard
            let text = String(
                validating: UnsafeRawBufferPointer(rebasing: bytes[start..<start + length]), as: UTF8.self)
        else {
            throw invalid("a string at byte \(start) is not UTF-8")
        }
        return text
    }

    /// `count` elements copied out of the bytes as they lie (little-endian hosts only, see the encoder).
    mutating func array<T: BitwiseCopyable>(_ count: Int) throws(RoadGraphFileError) -> [T] {
        let size = count * MemoryLayout<T>.stride
        let start = try take(size)
        return [T](unsafeUninitializedCapacity: count) { buffer, initialized in
            UnsafeMutableRawBufferPointer(buffer).copyMemory(
                from: UnsafeRawBufferPointer(rebasing: bytes[start..<start + size]))
            initialized = count
        }
    }

    /// Everything after the cursor.
    mutating func rest() -> UnsafeRawBufferPointer {
        defer { offset = bytes.count }
        return UnsafeRawBufferPointer(rebasing: bytes[offset...])
    }

    /// Throws unless the section has been read to its end.
    func finish() throws(RoadGraphFileError) {
        guard offset == bytes.count else { throw invalid("\(bytes.count - offset) unread bytes at its end") }
    }
}

extension UnsafeRawBufferPointer {
    func u32(at offset: Int) -> UInt32 { UInt32(littleEndian: loadUnaligned(fromByteOffset: offset, as: UInt32.self)) }
    func u64(at offset: Int) -> UInt64 { UInt64(littleEndian: loadUnaligned(fromByteOffset: offset, as: UInt64.self)) }
}
