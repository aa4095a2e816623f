import CZlib
import Foundation

/// A streaming reader of OSM PBF files (the OpenStreetMap binary format): it reads the OSMHeader when opened and
/// hands every node, way and relation to callbacks, one blob at a time. Raw and zlib blobs are supported.
public struct OSMReader: Sendable {
    /// The required features this reader implements; a file requiring any other is refused.
    public static let supportedFeatures: Set<String> = ["OsmSchema-V0.6", "DenseNodes"]
    /// The format's limit on a BlobHeader's size.
    static let maxBlobHeaderSize = 64 * 1024
    /// The format's limit on a Blob's size, compressed or not.
    static let maxBlobSize = 32 * 1024 * 1024

    /// The file's OSMHeader.
    public let header: OSMHeader
    /// The box the file's header says it covers, when it gives one.
    public var boundingBox: OSMBoundingBox? { header.boundingBox }
    private let data: Data
    private let firstDataBlob: Int

    /// Opens the file at `path` (memory-mapped when possible) and reads its header.
    public init(path: String) throws {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path), options: .mappedIfSafe)
        } catch {
            throw OSMPBFError.cannotOpen(path: path, reason: error.localizedDescription)
        }
        try self.init(data: data)
    }

    /// Reads a PBF file already in memory (for tests and generated files).
    public init(bytes: [UInt8]) throws {
        try self.init(data: Data(bytes))
    }

    private init(data: Data) throws {
        guard !data.isEmpty else { throw OSMPBFError.empty }
        let (header, next) = try data.withUnsafeBytes { raw in
            let file = raw.bindMemory(to: UInt8.self)
            let frame = try Self.frame(in: file, at: 0)
            guard frame.type == "OSMHeader" else { throw OSMPBFError.missingHeader(offset: 0, found: frame.type) }
            let block = try Self.blobContents(in: file, frame: frame)
            let header = try block.withUnsafeBufferPointer { buffer in
                try Self.decoding(frame, block: "HeaderBlock") { try HeaderBlockDecoder.decode(ProtobufReader(buffer)) }
            }
            return (header, frame.next)
        }
        let unsupported = header.requiredFeatures.filter { !Self.supportedFeatures.contains($0) }
        guard unsupported.isEmpty else { throw OSMPBFError.unsupportedFeatures(unsupported) }
        self.header = header
        self.data = data
        self.firstDataBlob = next
    }

    /// Visits every entity in file order. Pass only the callbacks you need: the blocks' node, way or relation
    /// groups without a callback are stepped over without decoding. A callback's error stops the read and is rethrown.
    public func read(
        nodes: ((OSMNode) throws -> Void)? = nil,
        ways: ((OSMWay) throws -> Void)? = nil,
        relations: ((OSMRelation) throws -> Void)? = nil
    ) throws {
        let visitor = PrimitiveBlockDecoder.Visitor(nodes: nodes, ways: ways, relations: relations)
        try data.withUnsafeBytes { raw in
            let file = raw.bindMemory(to: UInt8.self)
            var offset = firstDataBlob
            while offset < file.count {
                let frame = try Self.frame(in: file, at: offset)
                offset = frame.next
                // The format says readers skip blob types they do not know.
                guard frame.type == "OSMData" else { continue }
                let block = try Self.blobContents(in: file, frame: frame)
                try block.withUnsafeBufferPointer { buffer in
                    try Self.decoding(frame, block: "PrimitiveBlock") {
                        try PrimitiveBlockDecoder.decode(ProtobufReader(buffer), visitor: visitor)
                    }
                }
            }
        }
    }

    /// One blob's framing: where its header and data sit, its type, and where the next frame starts.
    struct Frame {
        /// The file offset of the frame's 4-byte length.
        let offset: Int
        /// The BlobHeader's `type` ("OSMHeader", "OSMData", or another the reader skips).
        let type: String
        /// The Blob message's bytes within the file.
        let blob: Range<Int>
        /// The offset of the next frame.
        var next: Int { blob.upperBound }
    }

    /// Reads the frame at `offset`: a big-endian 32-bit BlobHeader length, the BlobHeader, then `datasize` bytes of
    /// Blob.
    static func frame(in file: UnsafeBufferPointer<UInt8>, at offset: Int) throws -> Frame {
        let remaining = file.count - offset
        guard remaining >= 4 else {
            throw OSMPBFError.truncated(offset: offset, what: "the BlobHeader length", needed: 4, available: remaining)
        }
        let headerSize =
            Int(file[offset]) << 24 | Int(file[offset + 1]) << 16 | Int(file[offset + 2]) << 8 | Int(file[offset + 3])
        guard headerSize <= maxBlobHeaderSize else {
            throw OSMPBFError.blobHeaderTooLarge(offset: offset, size: headerSize)
        }
        let headerStart = offset + 4
        guard file.count - headerStart >= headerSize else {
            throw OSMPBFError.truncated(
                offset: headerStart, what: "the BlobHeader", needed: headerSize, available: file.count - headerStart)
        }
        var type: String?
        var dataSize: Int32?
        do {
            var reader = ProtobufReader(UnsafeBufferPointer(rebasing: file[headerStart..<headerStart + headerSize]))
            while let (field, wire) = try reader.nextField() {
                switch field {
                case 1:
                    try reader.expect(.lengthDelimited, wire, field: field, in: "BlobHeader")
                    type = try reader.string()
                case 3:
                    try reader.expect(.varint, wire, field: field, in: "BlobHeader")
                    dataSize = try reader.int32()
                default:
                    try reader.skip(wire)
                }
            }
        } catch let error as ProtobufError {
            throw OSMPBFError.malformed(
                offset: offset, block: "BlobHeader", position: error.position, reason: error.reason)
        }
        guard let type else {
            throw OSMPBFError.malformed(
                offset: offset, block: "BlobHeader", position: headerSize, reason: "it has no type (field 1)")
        }
        guard let dataSize, dataSize >= 0 else {
            throw OSMPBFError.malformed(
                offset: offset, block: "BlobHeader", position: headerSize,
                reason: "its datasize (field 3) is missing or negative")
        }
        let size = Int(dataSize)
        guard size <= maxBlobSize else { throw OSMPBFError.blobTooLarge(offset: offset, size: size) }
        let blobStart = headerStart + headerSize
        guard file.count - blobStart >= size else {
            throw OSMPBFError.truncated(
                offset: blobStart, what: "the \(type) Blob", needed: size, available: file.count - blobStart)
        }
        return Frame(offset: offset, type: type, blob: blobStart..<blobStart + size)
    }

    /// A Blob's uncompressed contents: its `raw` bytes, or its `zlib_data` inflated to `raw_size`.
    static func blobContents(in file: UnsafeBufferPointer<UInt8>, frame: Frame) throws -> [UInt8] {
        var raw: Range<Int>?
        var zlib: Range<Int>?
        var rawSize: Int32?
        var other: String?
        let base = frame.blob.lowerBound
        do {
            var reader = ProtobufReader(UnsafeBufferPointer(rebasing: file[frame.blob]))
            while let (field, wire) = try reader.nextField() {
                switch field {
                case 1:
                    try reader.expect(.lengthDelimited, wire, field: field, in: "Blob")
                    raw = try reader.lengthDelimitedRange()
                case 2:
                    try reader.expect(.varint, wire, field: field, in: "Blob")
                    rawSize = try reader.int32()
                case 3:
                    try reader.expect(.lengthDelimited, wire, field: field, in: "Blob")
                    zlib = try reader.lengthDelimitedRange()
                case 4: other = "lzma"; try reader.skip(wire)
                case 5: other = "bzip2"; try reader.skip(wire)
                case 6: other = "lz4"; try reader.skip(wire)
                case 7: other = "zstd"; try reader.skip(wire)
                default: try reader.skip(wire)
                }
            }
        } catch let error as ProtobufError {
            throw OSMPBFError.malformed(
                offset: frame.offset, block: "Blob", position: error.position, reason: error.reason)
        }
        if let raw {
            return Array(UnsafeBufferPointer(rebasing: file[(base + raw.lowerBound)..<(base + raw.upperBound)]))
        }
        if let zlib {
            guard let rawSize, rawSize >= 0 else {
                throw OSMPBFError.malformed(
                    offset: frame.offset, block: "Blob", position: frame.blob.count,
                    reason: "zlib data without a valid raw_size (field 2)")
            }
            guard Int(rawSize) <= maxBlobSize else {
                throw OSMPBFError.blobTooLarge(offset: frame.offset, size: Int(rawSize))
            }
            return try inflate(
                UnsafeBufferPointer(rebasing: file[(base + zlib.lowerBound)..<(base + zlib.upperBound)]),
                size: Int(rawSize), offset: frame.offset)
        }
        throw OSMPBFError.unsupportedCompression(
            offset: frame.offset, compression: other ?? "no data (neither raw nor zlib_data)")
    }

    /// Inflates zlib data that must come to exactly `size` bytes.
    static func inflate(_ source: UnsafeBufferPointer<UInt8>, size: Int, offset: Int) throws -> [UInt8] {
        // One spare byte so data that inflates to more than raw_size is caught rather than silently cut off.
        var produced: uLongf = uLongf(size + 1)
        var status: Int32 = Z_OK
        let output = [UInt8](unsafeUninitializedCapacity: size + 1) { buffer, count in
            status = uncompress(buffer.baseAddress, &produced, source.baseAddress, uLong(source.count))
            count = status == Z_OK ? Int(produced) : 0
        }
        switch status {
        case Z_OK: break
        case Z_DATA_ERROR:
            throw OSMPBFError.decompressionFailed(offset: offset, reason: "the data is corrupt or incomplete")
        case Z_BUF_ERROR:
            throw OSMPBFError.decompressionFailed(
                offset: offset, reason: "it inflates to more than its raw_size of \(size) bytes")
        case Z_MEM_ERROR: throw OSMPBFError.decompressionFailed(offset: offset, reason: "out of memory")
        default: throw OSMPBFError.decompressionFailed(offset: offset, reason: "zlib status \(status)")
        }
        guard output.count == size else {
            throw OSMPBFError.decompressionFailed(
                offset: offset, reason: "it inflates to \(output.count) bytes, its raw_size says \(size)")
        }
        return output
    }

    /// Runs a block decoder, turning its protobuf errors into `OSMPBFError.malformed` naming the blob.
    private static func decoding<T>(_ frame: Frame, block: String, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as ProtobufError {
            throw OSMPBFError.malformed(
                offset: frame.offset, block: block, position: error.position, reason: error.reason)
        }
    }
}
