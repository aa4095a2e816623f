public import HTTPTransport
public import EnRouteModels
import Foundation

/// A proof waiting in the capture queue: what it is, where its upload lives once created, and the offset the server
/// last acknowledged (a hint; the server's `HEAD` decides where to resume).
public struct PendingProof: Sendable, Equatable {
    /// The id the `delivered` step names; also the upload's id on the server.
    public let proofId: String
    public let tripId: String
    public let kind: ProofKind
    public let contentType: String
    /// Bytes in all.
    public let size: Int
    /// The upload's path once the server created it.
    public var location: String? = nil
    public var acknowledged: Int = 0
}

/// What one pass of the queue did.
public struct ProofSyncReport: Sendable, Equatable {
    /// Proofs now complete on the server (they left the queue).
    public var uploaded: [String] = []
    /// Proofs the server will never take, with its reason (they left the queue too).
    public var refused: [String: String] = [:]
    /// True when the network failed mid-way: run again after a backoff; the next pass resumes from the server's offset.
    public var interrupted = false
}

/// The platform's third kind of provider data, beside the step outbox: a photo or signature captured at the door is
/// kept in the device store at once (`capture`), the `delivered` step names it by its id, and `sync` uploads it as a
/// tus 1.0 transfer in checksummed chunks. After a cut, or an app restart on the same store, the next `sync` asks the
/// server (`HEAD`) where the upload stands and goes on from there; a resent creation with the same id is harmless.
public final class ProofCaptureQueue: Sendable {
    private let store: ProviderStore
    private let client: any HTTPClient
    private let server: APIServer
    private let makeID: @Sendable () -> String
    /// Bytes per PATCH.
    public let chunkSize: Int

    /// A queue in `store`, uploading to `server` through `client` in chunks of `chunkSize` bytes; ids from `makeID`.
    public init(
        store: ProviderStore, client: any HTTPClient, server: APIServer, chunkSize: Int = 256 * 1024,
        makeID: @escaping @Sendable () -> String
    ) {
        self.store = store; self.client = client; self.server = server; self.chunkSize = max(1, chunkSize);
        self.makeID = makeID
    }

    /// Keeps `bytes` as the proof of `tripId` (one local transaction, no network) and returns its id for the
    /// `delivered` step.
    public func capture(_ bytes: [UInt8], kind: ProofKind, contentType: String, tripId: String) throws -> String {
        let proof = PendingProof(
            proofId: makeID(), tripId: tripId, kind: kind, contentType: contentType, size: bytes.count)
        try store.enqueue(proof, bytes: bytes)
        return proof.proofId
    }

    /// Every proof not yet complete on the server, in capture order.
    public func pending() throws -> [PendingProof] { try store.pendingProofs() }

    /// Uploads the queue, oldest first, as far as the network allows.
    public func sync() async -> ProofSyncReport {
        var report = ProofSyncReport()
        for proof in (try? store.pendingProofs()) ?? [] {
            do {
                switch try await upload(proof) {
                case .complete: report.uploaded.append(proof.proofId)
                case .refused(let reason): report.refused[proof.proofId] = reason
                }
                try store.removeProof(proof.proofId)
            } catch {
                report.interrupted = true
                return report
            }
        }
        return report
    }

    private enum Outcome { case complete, refused(String) }

    private func upload(_ proof: PendingProof) async throws -> Outcome {
        guard let bytes = try store.proofBytes(proof.proofId) else {
            return .refused("the proof's bytes are gone from the device")
        }
        var location = proof.location
        var offset: Int
        if let known = location {
            let head = try await send("HEAD", known)
            switch head.status {
            case 200: offset = Int(head.header("upload-offset") ?? "") ?? 0
            case 404, 410: location = nil; offset = 0  // the server dropped it: create it again under the same id
            default:
                if let refusal = Self.refusal(head) { return .refused(refusal) }; throw APIError.status(head.status)
            }
        } else {
            offset = 0
        }
        if location == nil {
            let created = try await send(
                "POST", APIPath.uploads,
                headers: [
                    "Upload-Length": String(bytes.count),
                    "Upload-Metadata": Self.metadata([
                        "tripId": proof.tripId, "kind": proof.kind.rawValue, "contentType": proof.contentType,
                        "proofId": proof.proofId,
                    ]),
                ])
            guard created.status == 201, let path = created.header("location") else {
                if let refusal = Self.refusal(created) { return .refused(refusal) }
                throw APIError.status(created.status)
            }
            location = path
            offset = Int(created.header("upload-offset") ?? "") ?? 0
            try store.recordProgress(proof.proofId, location: path, acknowledged: offset)
        }
        guard let location else { throw APIError.status(0) }
        while offset < bytes.count {
            let chunk = Array(bytes[offset..<min(bytes.count, offset + chunkSize)])
            let answer = try await send(
                "PATCH", location,
                headers: [
                    "Upload-Offset": String(offset), "Content-Type": "application/offset+octet-stream",
                    "Upload-Checksum": "sha1 " + Data(SHA1.digest(chunk)).base64EncodedString(),
                ], body: Data(chunk))
            switch answer.status {
            case 204:
                guard let next = Int(answer.header("upload-offset") ?? ""), next > offset else {
                    throw APIError.status(204)
                }
                offset = next
                try store.recordProgress(proof.proofId, location: location, acknowledged: offset)
            case 409, 460:
                // Another offset on the server (a lost answer) or a chunk damaged on the way: ask where it stands.
                let head = try await send("HEAD", location)
                guard head.status == 200, let at = Int(head.header("upload-offset") ?? "") else {
                    throw APIError.status(head.status)
                }
                offset = at
            default:
                if let refusal = Self.refusal(answer) { return .refused(refusal) }
                throw APIError.status(answer.status)
            }
        }
        return .complete
    }

    /// The reason a 4xx answer gives when the server will never take this proof (bad type, too large, not this
    /// provider's trip, content not what it says); nil for answers worth retrying.
    static func refusal(_ response: HTTPClientResponse) -> String? {
        guard [400, 403, 404, 413, 415, 422].contains(response.status) else { return nil }
        return (try? WireCoding.decoder().decode(Problem.self, from: response.body))?.detail
            ?? "refused with \(response.status)"
    }

    private func send(
        _ method: String, _ path: String, headers: [String: String] = [:], body: Data? = nil
    ) async throws -> HTTPClientResponse {
        var request = await server.request(
            method, path, headers: headers.merging(["Tus-Resumable": "1.0.0"]) { a, _ in a })
        request.body = body
        return try await client.send(request)
    }

    /// tus `Upload-Metadata`: `key base64(value)` pairs, comma-separated, in key order.
    static func metadata(_ pairs: [String: String]) -> String {
        pairs.sorted { $0.key < $1.key }.map { "\($0.key) \(Data($0.value.utf8).base64EncodedString())" }.joined(
            separator: ",")
    }
}
