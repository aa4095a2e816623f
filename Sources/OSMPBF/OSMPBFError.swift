/// Why an OSM PBF file could not be read. Every case names where in the file it went wrong.
public enum OSMPBFError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file could not be opened or read.
    case cannotOpen(path: String, reason: String)
    /// The file has no bytes.
    case empty
    /// The file ends inside a frame: `needed` bytes of `what` were due at `offset`, only `available` remain.
    case truncated(offset: Int, what: String, needed: Int, available: Int)
    /// A BlobHeader is larger than the format's 64 KiB limit.
    case blobHeaderTooLarge(offset: Int, size: Int)
    /// A Blob (compressed or uncompressed) is larger than the format's 32 MiB limit.
    case blobTooLarge(offset: Int, size: Int)
    /// A message's protobuf encoding is broken: `reason` says how, `position` is the byte within the decoded `block`.
    case malformed(offset: Int, block: String, position: Int, reason: String)
    /// A blob is compressed with a scheme this reader does not decode (only raw and zlib are).
    case unsupportedCompression(offset: Int, compression: String)
    /// zlib refused a blob's data.
    case decompressionFailed(offset: Int, reason: String)
    /// The OSMHeader requires features this reader does not implement.
    case unsupportedFeatures([String])
    /// The file does not start with an OSMHeader blob.
    case missingHeader(offset: Int, found: String)

    /// One line naming what was wrong and where.
    public var description: String {
        switch self {
        case .cannotOpen(let path, let reason):
            "cannot read OSM PBF file \(path): \(reason)"
        case .empty:
            "the OSM PBF file is empty (expected an OSMHeader blob)"
        case .truncated(let offset, let what, let needed, let available):
            "OSM PBF file is truncated at byte \(offset): \(what) needs \(needed) bytes, \(available) remain"
        case .blobHeaderTooLarge(let offset, let size):
            "BlobHeader at byte \(offset) claims \(size) bytes; the limit is 65536"
        case .blobTooLarge(let offset, let size):
            "Blob at byte \(offset) claims \(size) bytes; the limit is 33554432 (32 MiB)"
        case .malformed(let offset, let block, let position, let reason):
            "malformed \(block) in the blob at byte \(offset): \(reason) (at byte \(position) of the block)"
        case .unsupportedCompression(let offset, let compression):
            "Blob at byte \(offset) uses \(compression) compression; only raw and zlib blobs are supported"
        case .decompressionFailed(let offset, let reason):
            "cannot inflate the zlib blob at byte \(offset): \(reason)"
        case .unsupportedFeatures(let features):
            "the file requires features this reader does not support: \(features.joined(separator: ", ")) "
                + "(supported: \(OSMReader.supportedFeatures.sorted().joined(separator: ", ")))"
        case .missingHeader(let offset, let found):
            "expected an OSMHeader blob at byte \(offset), found \"\(found)\""
        }
    }
}
