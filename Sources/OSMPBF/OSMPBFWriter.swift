import CZlib
import Foundation

/// A streaming writer of OSM PBF files: an OSMHeader, then zlib-compressed PrimitiveBlocks of up to
/// `entitiesPerBlock` entities (dense nodes, ways, relations), 100-nanodegree granularity, no metadata.
///
/// Write nodes first, then ways, then relations (the order readers such as osrm-extract expect); call `finish`
/// to flush the last block. Not thread-safe.
public final class OSMPBFWriter {
    /// Entities per PrimitiveBlock (the format advises at most 8,000).
    public static let entitiesPerBlock = 8000

    private let sink: ([UInt8]) throws -> Void
    private var nodes: [OSMNode] = []
    private var ways: [OSMWay] = []
    private var relations: [OSMRelation] = []
    private var finished = false

    /// A writer handing each frame's bytes to `sink`, which first gets the header frame.
    public init(
        boundingBox: OSMBoundingBox? = nil, writingProgram: String = "OSMPBF", sink: @escaping ([UInt8]) throws -> Void
    ) throws {
        self.sink = sink
        var block = PBFEncoder()
        if let box = boundingBox {
            block.message(1) { bbox in
                bbox.sint64Field(1, Int64((box.minLon * 1e9).rounded()))
                bbox.sint64Field(2, Int64((box.maxLon * 1e9).rounded()))
                bbox.sint64Field(3, Int64((box.maxLat * 1e9).rounded()))
                bbox.sint64Field(4, Int64((box.minLat * 1e9).rounded()))
            }
        }
        block.stringField(4, "OsmSchema-V0.6")
        block.stringField(4, "DenseNodes")
        block.stringField(16, writingProgram)
        try sink(try Self.frame(type: "OSMHeader", contents: block.bytes))
    }

    /// A writer to the file at `path` (created or truncated).
    public convenience init(path: String, boundingBox: OSMBoundingBox? = nil, writingProgram: String = "OSMPBF") throws
    {
        guard FileManager.default.createFile(atPath: path, contents: nil),
            let handle = FileHandle(forWritingAtPath: path)
        else {
            throw OSMPBFError.cannotOpen(path: path, reason: "cannot create the file")
        }
        try self.init(boundingBox: boundingBox, writingProgram: writingProgram) { try handle.write(contentsOf: $0) }
    }

    /// Queues a node; a full block is written.
    public func write(_ node: OSMNode) throws {
        nodes.append(node)
        if nodes.count >= Self.entitiesPerBlock { try flush() }
    }

    /// Queues a way; the nodes queued so far are written first.
    public func write(_ way: OSMWay) throws {
        if !nodes.isEmpty { try flush() }
        ways.append(way)
        if ways.count >= Self.entitiesPerBlock { try flush() }
    }

    /// Queues a relation; the nodes and ways queued so far are written first.
    public func write(_ relation: OSMRelation) throws {
        if !nodes.isEmpty || !ways.isEmpty { try flush() }
        relations.append(relation)
        if relations.count >= Self.entitiesPerBlock { try flush() }
    }

    /// Writes what is queued; nothing may be written after.
    public func finish() throws {
        guard !finished else { return }
        try flush()
        finished = true
    }

    /// The bytes of a whole file holding `nodes`, `ways` and `relations` (for tests and small files).
    public static func encode(
        nodes: [OSMNode], ways: [OSMWay] = [], relations: [OSMRelation] = [],
        boundingBox: OSMBoundingBox? = nil
    ) throws -> [UInt8] {
        var bytes: [UInt8] = []
        let writer = try OSMPBFWriter(boundingBox: boundingBox) { bytes.append(contentsOf: $0) }
        for node in nodes { try writer.write(node) }
        for way in ways { try writer.write(way) }
        for relation in relations { try writer.write(relation) }
        try writer.finish()
        return bytes
    }

    private func flush() throws {
        precondition(!finished, "OSMPBFWriter: written after finish()")
        guard !(nodes.isEmpty && ways.isEmpty && relations.isEmpty) else { return }
        var strings = StringTable()
        var group = PBFEncoder()
        if !nodes.isEmpty {
            group.message(2) { dense in
                var ids: [Int64] = [], lats: [Int64] = [], lons: [Int64] = []
                var keysVals: [UInt64] = []
                var last = (id: Int64(0), lat: Int64(0), lon: Int64(0))
                var anyTags = false
                for node in nodes {
                    let lat = Int64((node.lat * 1e7).rounded()), lon = Int64((node.lon * 1e7).rounded())
                    ids.append(node.id - last.id); lats.append(lat - last.lat); lons.append(lon - last.lon)
                    last = (node.id, lat, lon)
                    for (key, value) in node.tags.sorted(by: { $0.key < $1.key }) {
                        keysVals.append(UInt64(strings.index(key))); keysVals.append(UInt64(strings.index(value)))
                        anyTags = true
                    }
                    keysVals.append(0)
                }
                dense.packedSint64(1, ids)
                dense.packedSint64(8, lats)
                dense.packedSint64(9, lons)
                if anyTags { dense.packedVarint(10, keysVals) }
            }
            nodes.removeAll(keepingCapacity: true)
        }
        for way in ways {
            group.message(3) { message in
                message.varintField(1, UInt64(bitPattern: way.id))
                let tags = way.tags.sorted { $0.key < $1.key }
                message.packedVarint(2, tags.map { UInt64(strings.index($0.key)) })
                message.packedVarint(3, tags.map { UInt64(strings.index($0.value)) })
                var previous: Int64 = 0
                message.packedSint64(
                    8,
                    way.refs.map { ref in
                        defer { previous = ref }; return ref - previous
                    })
            }
        }
        ways.removeAll(keepingCapacity: true)
        for relation in relations {
            group.message(4) { message in
                message.varintField(1, UInt64(bitPattern: relation.id))
                let tags = relation.tags.sorted { $0.key < $1.key }
                message.packedVarint(2, tags.map { UInt64(strings.index($0.key)) })
                message.packedVarint(3, tags.map { UInt64(strings.index($0.value)) })
                message.packedVarint(8, relation.members.map { UInt64(strings.index($0.role)) })
                var previous: Int64 = 0
                message.packedSint64(
                    9,
                    relation.members.map { member in
                        defer { previous = member.ref }; return member.ref - previous
                    })
                message.packedVarint(10, relation.members.map { UInt64($0.type.rawValue) })
            }
        }
        relations.removeAll(keepingCapacity: true)
        var block = PBFEncoder()
        block.message(1) { table in
            for string in strings.strings { table.bytesField(1, string) }
        }
        block.bytesField(2, group.bytes)
        try sink(try Self.frame(type: "OSMData", contents: block.bytes))
    }

    /// A frame: the big-endian BlobHeader length, the BlobHeader, then a zlib Blob of `contents`.
    private static func frame(type: String, contents: [UInt8]) throws -> [UInt8] {
        var bound = compressBound(uLong(contents.count))
        var compressed = [UInt8](repeating: 0, count: Int(bound))
        let status = compressed.withUnsafeMutableBufferPointer { out in
            contents.withUnsafeBufferPointer { input in
                compress2(out.baseAddress, &bound, input.baseAddress, uLong(input.count), 6)
            }
        }
        guard status == Z_OK else {
            throw OSMPBFError.cannotOpen(path: "(writer)", reason: "zlib compress2 failed with status \(status)")
        }
        compressed.removeSubrange(Int(bound)...)
        var blob = PBFEncoder()
        blob.varintField(2, UInt64(contents.count))
        blob.bytesField(3, compressed)
        var header = PBFEncoder()
        header.stringField(1, type)
        header.varintField(3, UInt64(blob.bytes.count))
        let length = UInt32(header.bytes.count)
        return [UInt8(length >> 24), UInt8(length >> 16 & 0xff), UInt8(length >> 8 & 0xff), UInt8(length & 0xff)]
            + header.bytes + blob.bytes
    }
}

/// A block's string table: index 0 is the empty string, each other string once.
private struct StringTable {
    private(set) var strings: [[UInt8]] = [[]]
    private var lookup: [String: Int] = [:]

    mutating func index(_ string: String) -> Int {
        if let known = lookup[string] { return known }
        strings.append(Array(string.utf8))
        lookup[string] = strings.count - 1
        return strings.count - 1
    }
}

/// Protobuf encoding: varints, zigzag, length-delimited fields and packed arrays (also what the tests build
/// hand-made files with).
struct PBFEncoder {
    var bytes: [UInt8] = []

    mutating func varint(_ value: UInt64) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(value & 0x7f) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
    }

    mutating func key(_ field: Int, wireType: Int) { varint(UInt64(field << 3 | wireType)) }
    mutating func varintField(_ field: Int, _ value: UInt64) { key(field, wireType: 0); varint(value) }
    mutating func sint64Field(_ field: Int, _ value: Int64) { varintField(field, Self.zigzag(value)) }
    mutating func bytesField(_ field: Int, _ payload: [UInt8]) {
        key(field, wireType: 2)
        varint(UInt64(payload.count))
        bytes.append(contentsOf: payload)
    }
    mutating func stringField(_ field: Int, _ text: String) { bytesField(field, Array(text.utf8)) }

    mutating func message(_ field: Int, _ build: (inout PBFEncoder) -> Void) {
        var inner = PBFEncoder()
        build(&inner)
        bytesField(field, inner.bytes)
    }

    mutating func packedVarint(_ field: Int, _ values: [UInt64]) {
        guard !values.isEmpty else { return }
        var inner = PBFEncoder()
        for value in values { inner.varint(value) }
        bytesField(field, inner.bytes)
    }

    mutating func packedSint64(_ field: Int, _ values: [Int64]) { packedVarint(field, values.map(Self.zigzag)) }

    static func zigzag(_ value: Int64) -> UInt64 { UInt64(bitPattern: (value << 1) ^ (value >> 63)) }
}
