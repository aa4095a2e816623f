public import Foundation
public import EnRouteModels
import Synchronization

/// One proof-of-delivery upload (a tus upload): which trip it proves, what it is, how far it has come.
public struct ProofUpload: Codable, Sendable, Equatable {
    public let id: String
    public let tripId: String
    /// The provider who created it; only they may append to it.
    public let providerId: String
    public let kind: ProofKind
    public let contentType: String
    /// Bytes in all (tus `Upload-Length`).
    public let length: Int
    /// Bytes durably received (tus `Upload-Offset`).
    public var offset: Int
    public let createdAt: Date
    /// Set when the last byte arrived and the content checked out.
    public var completedAt: Date?
    /// SHA-256 of the whole proof (hex), once complete.
    public var sha256: String?

    public init(
        id: String, tripId: String, providerId: String, kind: ProofKind, contentType: String, length: Int,
        offset: Int = 0,
        createdAt: Date, completedAt: Date? = nil, sha256: String? = nil
    ) {
        self.id = id; self.tripId = tripId; self.providerId = providerId; self.kind = kind;
        self.contentType = contentType
        self.length = length; self.offset = offset; self.createdAt = createdAt; self.completedAt = completedAt;
        self.sha256 = sha256
    }

    /// True once every byte is in and checked.
    public var isComplete: Bool { completedAt != nil }
}

/// Where upload state lives (the bytes are the `BlobStore`'s), and which upload is each trip's proof.
public protocol ProofUploadStore: Sendable {
    func upload(id: String) async throws -> ProofUpload?
    /// Creates or replaces the upload with `upload.id`.
    func save(_ upload: ProofUpload) async throws
    func delete(id: String) async throws
    /// The proof id recorded apart from the trip for a trip delivered before the step kept its proof on the trip
    /// itself (`TripRecord.proofId`), nil when none.
    func proofId(tripId: String) async throws -> String?
    /// Uploads not yet complete that were created before `cutoff`.
    func incomplete(createdBefore cutoff: Date) async throws -> [ProofUpload]
}

/// Upload state in memory, for tests and the in-memory backend.
public final class InMemoryProofUploadStore: ProofUploadStore {
    private let state = Mutex<[String: ProofUpload]>([:])
    public init() {}
    public func upload(id: String) async throws -> ProofUpload? { state.withLock { $0[id] } }
    public func save(_ upload: ProofUpload) async throws { state.withLock { $0[upload.id] = upload } }
    public func delete(id: String) async throws { _ = state.withLock { $0.removeValue(forKey: id) } }
    /// Memory holds no trip from before the proof moved onto the trip.
    public func proofId(tripId: String) async throws -> String? { nil }
    public func incomplete(createdBefore cutoff: Date) async throws -> [ProofUpload] {
        state.withLock { $0.values.filter { !$0.isComplete && $0.createdAt < cutoff }.sorted { $0.id < $1.id } }
    }
}
