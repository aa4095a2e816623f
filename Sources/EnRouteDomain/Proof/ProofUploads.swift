public import Foundation
public import EnRouteModels
import Synchronization

/// A refused upload request: the status and words the API answers with (tus's own statuses where it names them).
public struct ProofProblem: Error, Sendable, Equatable {
    public let status: Int
    public let title: String
    public let detail: String
    public init(_ status: Int, _ title: String, _ detail: String) {
        self.status = status; self.title = title; self.detail = detail
    }

    static func notFound(_ detail: String = "No such upload.") -> ProofProblem {
        ProofProblem(404, "Not Found", detail)
    }
    static func bad(_ detail: String) -> ProofProblem { ProofProblem(400, "Bad Request", detail) }
}

/// The platform's proof of delivery as a resumable transfer (tus 1.0 core, creation and termination; checksums are the
/// API's): the trip's provider creates an upload, appends to it at the offset the server holds, and the customer and
/// ops read it once complete. The `delivered` step names it by id and is taken while the bytes still flow.
///
/// Every acknowledged offset is durable: the bytes reach the blob store (which syncs them) and then the offset
/// reaches the upload store, before the answer. A crash between the two leaves bytes past the stored offset, which
/// the next append at that offset overwrites.
public final class ProofUploads: Sendable {
    private let service: TripService
    private let uploads: any ProofUploadStore
    private let blobs: any BlobStore
    private let ids: any IDGenerator
    private let now: @Sendable () -> Date
    private let sha256: @Sendable ([UInt8]) -> String
    /// Uploads with an append under way: a second one at the same time is refused rather than interleaved.
    private let busy = Mutex<Set<String>>([])

    /// The largest upload of any kind (tus `Tus-Max-Size`).
    public static let maxSize = ProofKind.allCases.map(\.maxBytes).max()!

    public init(
        service: TripService, uploads: any ProofUploadStore, blobs: any BlobStore, ids: any IDGenerator,
        now: @escaping @Sendable () -> Date, sha256: @escaping @Sendable ([UInt8]) -> String
    ) {
        self.service = service; self.uploads = uploads; self.blobs = blobs; self.ids = ids; self.now = now;
        self.sha256 = sha256
    }

    /// Creates an upload of `length` bytes from tus `Upload-Metadata` (`tripId`, `kind`, `contentType`, and optionally
    /// `proofId`, the id the client chose so its `delivered` step can name the proof before the upload exists).
    /// Creating again with the same `proofId` and the same metadata answers the same upload.
    public func create(
        length: Int, metadata: [String: String], by account: Account
    ) async throws(ProofProblem) -> ProofUpload {
        guard account.role == .provider else {
            throw ProofProblem(403, "Forbidden", "Only the trip's provider uploads its proof.")
        }
        guard let tripId = metadata["tripId"], !tripId.isEmpty else { throw .bad("Upload-Metadata needs tripId.") }
        guard let kindName = metadata["kind"], let kind = ProofKind(rawValue: kindName) else {
            throw .bad("Upload-Metadata needs kind: photo or signature.")
        }
        guard let contentType = metadata["contentType"]?.lowercased(), kind.contentTypes.contains(contentType) else {
            throw ProofProblem(
                415, "Unsupported Media Type",
                "A \(kind.rawValue) must be one of \(kind.contentTypes.joined(separator: ", ")).")
        }
        guard length > 0 else { throw .bad("Upload-Length must be at least 1.") }
        guard length <= kind.maxBytes else {
            throw ProofProblem(413, "Content Too Large", "A \(kind.rawValue) may be at most \(kind.maxBytes) bytes.")
        }
        guard let trip = try? service.cached(tripId), trip.kind == .delivery, trip.providerId == account.id,
            trip.status != .delivery(.cancelled)
        else {
            throw .notFound("No delivery of yours with that tripId.")
        }
        let id: String
        if let chosen = metadata["proofId"] {
            guard Self.isValidID(chosen) else {
                throw .bad("proofId must be 1 to 64 of letters, digits, '.', '_' and '-'.")
            }
            if let existing = try await stored(chosen) {
                guard existing.providerId == account.id, existing.tripId == tripId, existing.length == length,
                    existing.kind == kind,
                    existing.contentType == contentType
                else {
                    throw ProofProblem(409, "Conflict", "An upload with this proofId exists with other metadata.")
                }
                return existing
            }
            id = chosen
        } else {
            id = ids.next()
        }
        let upload = ProofUpload(
            id: id, tripId: tripId, providerId: account.id, kind: kind, contentType: contentType, length: length,
            createdAt: now())
        do {
            try await blobs.create(id)
            try await uploads.save(upload)
        } catch {
            throw ProofProblem(503, "Service Unavailable", "The upload could not be stored; try again.")
        }
        return upload
    }

    /// The upload as its creator sees it (tus `HEAD`); 404 for anyone else.
    public func upload(_ id: String, by account: Account) async throws(ProofProblem) -> ProofUpload {
        guard let upload = try await stored(id), upload.providerId == account.id, account.role == .provider else {
            throw .notFound()
        }
        return upload
    }

    /// Appends `bytes` at `offset` (tus `PATCH`): 409 when `offset` is not the server's; on the last byte the content
    /// is
    /// checked against its type (422 and the upload is dropped when it is not what it says).
    public func append(
        _ id: String, offset: Int, bytes: [UInt8], by account: Account
    ) async throws(ProofProblem) -> ProofUpload {
        _ = try await self.upload(id, by: account)
        guard busy.withLock({ $0.insert(id).inserted }) else {
            throw ProofProblem(
                409, "Conflict",
                "Another PATCH of this upload is under way; ask HEAD for the offset and go on from there.")
        }
        defer { _ = busy.withLock { $0.remove(id) } }
        // Read again under the claim: the offset another append just stored is the one that counts.
        var upload = try await self.upload(id, by: account)
        guard offset == upload.offset else {
            throw ProofProblem(
                409, "Conflict",
                "Upload-Offset is \(offset) but the server holds \(upload.offset) bytes; resume from \(upload.offset).")
        }
        if upload.isComplete, bytes.isEmpty { return upload }
        guard upload.offset + bytes.count <= upload.length else {
            throw ProofProblem(413, "Content Too Large", "The body goes past Upload-Length (\(upload.length)).")
        }
        do {
            upload.offset = try await blobs.append(id, at: offset, bytes)
        } catch {
            throw ProofProblem(
                503, "Service Unavailable", "The bytes could not be stored; ask HEAD for the offset and resend.")
        }
        if upload.offset == upload.length {
            let content: [UInt8]
            do { content = try await blobs.read(id) } catch {
                throw ProofProblem(503, "Service Unavailable", "The upload could not be read back.")
            }
            guard ProofContent.matches(upload.contentType, content) else {
                try? await blobs.delete(id)
                try? await uploads.delete(id: id)
                throw ProofProblem(
                    422, "Unprocessable Content", "The upload is not a \(upload.contentType) file; it was discarded.")
            }
            upload.completedAt = now()
            upload.sha256 = sha256(content)
        }
        do { try await uploads.save(upload) } catch {
            throw ProofProblem(
                503, "Service Unavailable", "The offset could not be stored; ask HEAD for the offset and resend.")
        }
        return upload
    }

    /// Ends an upload and drops its bytes (tus termination).
    public func terminate(_ id: String, by account: Account) async throws(ProofProblem) {
        _ = try await upload(id, by: account)
        try? await blobs.delete(id)
        do { try await uploads.delete(id: id) } catch { throw ProofProblem(503, "Service Unavailable", "Try again.") }
    }

    /// Checks that `proofId` may be the proof of `trip`'s delivered step by `account`: a valid id, and, if the upload
    /// exists already, one of this provider's for this trip. The upload may not exist yet.
    public func check(proofId: String, trip: TripRecord, by account: Account) async throws(ProofProblem) {
        guard Self.isValidID(proofId) else {
            throw ProofProblem(
                422, "Unprocessable Content", "/proofId must be 1 to 64 of letters, digits, '.', '_' and '-'")
        }
        if let upload = try await stored(proofId), upload.providerId != account.id || upload.tripId != trip.id {
            throw ProofProblem(422, "Unprocessable Content", "/proofId names an upload that is not this trip's")
        }
    }

    /// Drops uploads that were never completed and were created before `cutoff`, with their bytes; returns how many.
    @discardableResult
    public func purgeAbandoned(createdBefore cutoff: Date) async throws -> Int {
        let stale = try await uploads.incomplete(createdBefore: cutoff)
        for upload in stale {
            try? await blobs.delete(upload.id)
            try await uploads.delete(id: upload.id)
        }
        return stale.count
    }

    /// The trip's proof and its bytes, for its customer and ops: 404 for anyone else or when the trip has none,
    /// 409 while the upload is still running.
    public func proof(
        tripId: String, by account: Account
    ) async throws(ProofProblem) -> (upload: ProofUpload, bytes: [UInt8]) {
        guard let trip = try? service.cached(tripId), trip.isVisible(to: account),
            account.role == .customer || account.role == .ops
        else {
            throw .notFound("No such trip.")
        }
        var proofId = trip.proofId
        // Trips delivered before the step carried its proof have it in the store's links only.
        if proofId == nil, trip.status == .delivery(.delivered) {
            proofId = (try? await uploads.proofId(tripId: trip.id)) ?? nil
        }
        guard let proofId else { throw .notFound("This trip has no proof of delivery.") }
        guard let upload = try await stored(proofId), upload.tripId == trip.id, upload.isComplete else {
            let progress =
                (try? await stored(proofId)).flatMap { $0 }.map { " (\($0.offset) of \($0.length) bytes)" } ?? ""
            throw ProofProblem(
                409, "Proof not complete", "The proof of delivery is still uploading\(progress); try again shortly.")
        }
        do { return (upload, try await blobs.read(upload.id)) } catch {
            throw ProofProblem(503, "Service Unavailable", "The proof could not be read; try again.")
        }
    }

    private func stored(_ id: String) async throws(ProofProblem) -> ProofUpload? {
        do { return try await uploads.upload(id: id) } catch {
            throw ProofProblem(503, "Service Unavailable", "Upload state could not be read; try again.")
        }
    }

    /// An upload id: 1 to 64 of letters, digits, `.`, `_` and `-` (a client's UUID fits).
    public static func isValidID(_ id: String) -> Bool {
        (1...64).contains(id.utf8.count)
            && id.utf8.allSatisfy { c in
                (0x30...0x39).contains(c) || (0x41...0x5A).contains(c) || (0x61...0x7A).contains(c) || c == 0x2E
                    || c == 0x5F || c == 0x2D
            }
    }
}
