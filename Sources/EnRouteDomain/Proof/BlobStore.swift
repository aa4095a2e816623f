import Synchronization

/// Where upload bytes live: a disk directory today, an S3-compatible bucket later. `append` returns only once the
/// bytes are durable, so an offset acknowledged to a client survives a crash.
public protocol BlobStore: Sendable {
    /// Starts an empty blob `id` (replacing any left over).
    func create(_ id: String) async throws
    /// Writes `bytes` at `offset`, first dropping anything stored past it (a write a crash cut short), durably;
    /// returns the blob's new length.
    func append(_ id: String, at offset: Int, _ bytes: [UInt8]) async throws -> Int
    /// The whole blob.
    func read(_ id: String) async throws -> [UInt8]
    /// Removes the blob; no error when there is none.
    func delete(_ id: String) async throws
}

/// Why a blob store refused.
public enum BlobStoreError: Error, Sendable, Equatable {
    case missing(String)
    /// The blob is shorter than the offset asked to write at.
    case gap(id: String, length: Int, offset: Int)
}

/// Blobs in memory, for tests and the in-memory backend.
public final class InMemoryBlobStore: BlobStore {
    private let blobs = Mutex<[String: [UInt8]]>([:])
    public init() {}

    public func create(_ id: String) async throws { blobs.withLock { $0[id] = [] } }

    public func append(_ id: String, at offset: Int, _ bytes: [UInt8]) async throws -> Int {
        try blobs.withLock { b in
            guard var blob = b[id] else { throw BlobStoreError.missing(id) }
            guard offset <= blob.count else { throw BlobStoreError.gap(id: id, length: blob.count, offset: offset) }
            blob.removeSubrange(offset...)
            blob += bytes
            b[id] = blob
            return blob.count
        }
    }

    public func read(_ id: String) async throws -> [UInt8] {
        try blobs.withLock {
            guard let blob = $0[id] else { throw BlobStoreError.missing(id) }; return blob
        }
    }

    public func delete(_ id: String) async throws { _ = blobs.withLock { $0.removeValue(forKey: id) } }

    /// How many blobs are held, for tests.
    public var count: Int { blobs.withLock { $0.count } }
}
