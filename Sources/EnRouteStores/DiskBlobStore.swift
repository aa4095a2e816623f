public import Foundation
public import EnRouteDomain
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Blobs as files in one directory (`<id>.blob`). An append truncates the file to the offset it writes at, writes,
/// and `fsync`s before returning, so an acknowledged offset survives a crash and bytes a crash left past the stored
/// offset are overwritten by the next append.
public final class DiskBlobStore: BlobStore {
    public let directory: URL

    /// A store in `directory`, created if missing.
    public init(directory: URL) throws {
        self.directory = directory
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    private func path(_ id: String) -> String { directory.appendingPathComponent("\(id).blob").path }

    public func create(_ id: String) async throws {
        let fd = open(path(id), O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        guard fd >= 0 else { throw Self.failure("create", id) }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw Self.failure("sync", id) }
    }

    public func append(_ id: String, at offset: Int, _ bytes: [UInt8]) async throws -> Int {
        let fd = open(path(id), O_WRONLY)
        guard fd >= 0 else { throw BlobStoreError.missing(id) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw Self.failure("stat", id) }
        guard offset <= Int(info.st_size) else {
            throw BlobStoreError.gap(id: id, length: Int(info.st_size), offset: offset)
        }
        guard ftruncate(fd, off_t(offset)) == 0 else { throw Self.failure("truncate", id) }
        var written = 0
        try bytes.withUnsafeBytes { raw in
            while written < raw.count {
                let n = pwrite(fd, raw.baseAddress! + written, raw.count - written, off_t(offset + written))
                if n < 0 { if errno == EINTR { continue }; throw Self.failure("write", id) }
                written += n
            }
        }
        guard fsync(fd) == 0 else { throw Self.failure("sync", id) }
        return offset + written
    }

    public func read(_ id: String) async throws -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: path(id)) else { throw BlobStoreError.missing(id) }
        return Array(data)
    }

    public func delete(_ id: String) async throws {
        unlink(path(id))
    }

    private static func failure(_ what: String, _ id: String) -> any Error {
        NSError(
            domain: "DiskBlobStore", code: Int(errno),
            userInfo: [NSLocalizedDescriptionKey: "\(what) \(id): \(String(cString: strerror(errno)))"])
    }
}
