import Foundation
import HTTPEngine
import EnRouteDomain
import EnRouteModels
import EnRouteCrypto

extension EnRouteAPI {
    /// SHA-256 of `bytes` as lower-case hex (a complete proof's fingerprint, its ETag).
    public static func sha256Hex(_ bytes: [UInt8]) -> String { Digest.hex(Digest.sha256(bytes)) }

    /// The tus version served.
    static let tusVersion = "1.0.0"

    /// Proof of delivery as a tus 1.0 upload (core, creation, checksum, termination), and the proof's read.
    func addUploadRoutes(_ r: inout Router) {
        guard let proofs = contact?.proofs else { return }
        addUploadCreation(&r, proofs)
        addUploadTransfer(&r, proofs)
    }

    /// The server's tus capabilities, and a new upload.
    private func addUploadCreation(_ r: inout Router, _ proofs: ProofUploads) {
        r.add(
            "OPTIONS", APIPath.Template.uploads,
            .sync { _ in
                var headers = HTTPHeaders()
                headers.add("Tus-Resumable", Self.tusVersion)
                headers.add("Tus-Version", Self.tusVersion)
                headers.add("Tus-Extension", "creation,checksum,termination")
                headers.add("Tus-Max-Size", String(ProofUploads.maxSize))
                headers.add("Tus-Checksum-Algorithm", "sha1,sha256")
                return HTTPResponse(status: 204, headers: headers)
            })
        r.post(
            APIPath.Template.uploads,
            limited(
                .steps,
                tus { req in
                    let account = try auth.account(for: req)
                    guard let text = req.headers["Upload-Length"], let length = Int(text), length >= 0 else {
                        throw HTTPError.badRequest(
                            "Upload-Length must be a non-negative integer (deferred lengths are not supported).")
                    }
                    let metadata = try Self.uploadMetadata(req.headers["Upload-Metadata"])
                    let upload = try await proof {
                        try await proofs.create(length: length, metadata: metadata, by: account)
                    }
                    var response = HTTPResponse(status: 201)
                    response.headers.add("Location", APIPath.upload(upload.id))
                    response.headers.add("Upload-Offset", String(upload.offset))
                    return response
                }))
    }

    /// An upload's offset, its bytes, its termination, and the finished proof's read.
    private func addUploadTransfer(_ r: inout Router, _ proofs: ProofUploads) {
        r.add(
            "HEAD", APIPath.Template.upload,
            .async(
                tus { req in
                    let account = try auth.account(for: req)
                    let upload = try await proof { try await proofs.upload(try req.parameter("id"), by: account) }
                    var response = HTTPResponse(status: 200)
                    response.headers.add("Upload-Offset", String(upload.offset))
                    response.headers.add("Upload-Length", String(upload.length))
                    response.headers.add("Cache-Control", "no-store")
                    return response
                }))
        r.add(
            "PATCH", APIPath.Template.upload, bodyLimit: ProofUploads.maxSize,
            .async(
                tus { req in
                    let account = try auth.account(for: req)
                    guard req.headers["Content-Type"]?.lowercased() == "application/offset+octet-stream" else {
                        throw HTTPError(
                            status: 415, title: "Unsupported Media Type",
                            detail: "Send the bytes as application/offset+octet-stream.")
                    }
                    guard let text = req.headers["Upload-Offset"], let offset = Int(text), offset >= 0 else {
                        throw HTTPError.badRequest("Upload-Offset must be a non-negative integer.")
                    }
                    if let checksum = req.headers["Upload-Checksum"] { try Self.verify(checksum: checksum, req.body) }
                    let upload = try await proof {
                        try await proofs.append(try req.parameter("id"), offset: offset, bytes: req.body, by: account)
                    }
                    var response = HTTPResponse(status: 204)
                    response.headers.add("Upload-Offset", String(upload.offset))
                    return response
                }))
        r.delete(
            APIPath.Template.upload,
            tus { req in
                let account = try auth.account(for: req)
                try await proof { try await proofs.terminate(try req.parameter("id"), by: account) }
                return .empty(204)
            })
        r.get(APIPath.Template.tripProof) { req in
            let account = try auth.account(for: req)
            let (upload, bytes) = try await proof {
                try await proofs.proof(tripId: try req.parameter("id"), by: account)
            }
            var headers = HTTPHeaders()
            headers.add("Content-Type", upload.contentType)
            headers.add("Cache-Control", "private, no-store")
            headers.add("ETag", "\"\(upload.sha256 ?? upload.id)\"")
            // An SVG signature is a document: never sniffed, never run.
            headers.add("X-Content-Type-Options", "nosniff")
            headers.add("Content-Security-Policy", "default-src 'none'; sandbox")
            return HTTPResponse(status: 200, headers: headers, body: .bytes(bytes))
        }
    }

    /// The `delivered` step's `proofId`, checked and recorded as the trip's proof before the step is applied; 422 on
    /// another step, on a malformed id, or on an upload that is not this trip's. The upload itself may come later.
    func checkProof(_ proofId: String?, move: TripMove, trip: TripRecord, by account: Account) async throws {
        guard let proofId else { return }
        guard move == .delivery(.delivered) else {
            throw HTTPError.invalid("/proofId", "only the delivered step takes a proof")
        }
        guard let proofs = contact?.proofs else { throw HTTPError.invalid("/proofId", "this server keeps no proofs") }
        // Checked here; recorded by the step itself, in the transaction that applies it.
        try await proof { try await proofs.check(proofId: proofId, trip: trip, by: account) }
    }

    /// `body`'s value, a `ProofProblem` as its problem document.
    private func proof<T>(_ body: () async throws -> T) async throws -> T {
        do { return try await body() } catch let problem as ProofProblem {
            if problem.status == 422, problem.detail.hasPrefix("/") {
                let pointer = String(problem.detail.prefix { $0 != " " })
                throw HTTPError.invalid(pointer, String(problem.detail.dropFirst(pointer.count + 1)))
            }
            var error = HTTPError(status: problem.status, title: problem.title, detail: problem.detail)
            if problem.status == 503 { error.headers.add("Retry-After", "1") }
            throw error
        }
    }

    /// A tus request handler: `Tus-Resumable` is required (412 naming the version served otherwise) and every answer,
    /// errors included, carries it.
    private func tus(
        _ handler: @escaping @Sendable (HTTPRequest) async throws -> HTTPResponse
    ) -> @Sendable (HTTPRequest) async throws -> HTTPResponse {
        { req in
            var response: HTTPResponse
            if req.headers["Tus-Resumable"] != Self.tusVersion {
                var error = HTTPError(
                    status: 412, title: "Precondition Failed", detail: "Send Tus-Resumable: \(Self.tusVersion).")
                error.headers.add("Tus-Version", Self.tusVersion)
                response = error.response
            } else {
                do { response = try await handler(req) } catch let error as HTTPError { response = error.response }
            }
            response.headers.set("Tus-Resumable", Self.tusVersion)
            return response
        }
    }

    /// tus `Upload-Metadata`: comma-separated `key base64value` pairs; 400 when malformed or a key repeats.
    static func uploadMetadata(_ header: String?) throws(HTTPError) -> [String: String] {
        guard let header, !header.isEmpty else { return [:] }
        var out: [String: String] = [:]
        for pair in header.split(separator: ",", omittingEmptySubsequences: false) {
            let parts = pair.trimmingCharacters(in: .whitespaces).split(
                separator: " ", omittingEmptySubsequences: false)
            guard (1...2).contains(parts.count), let key = parts.first, !key.isEmpty, out[String(key)] == nil else {
                throw HTTPError.badRequest(
                    "Upload-Metadata must be comma-separated 'key base64value' pairs with distinct keys.")
            }
            var value = ""
            if parts.count == 2 {
                guard let data = Data(base64Encoded: String(parts[1])), let text = String(data: data, encoding: .utf8)
                else {
                    throw HTTPError.badRequest("Upload-Metadata value of \(key) is not base64 of UTF-8 text.")
                }
                value = text
            }
            out[String(key)] = value
        }
        return out
    }

    /// tus `Upload-Checksum: <algorithm> <base64 digest>` over the request's body: 400 for an algorithm not served,
    /// 460 when the body does not match.
    static func verify(checksum header: String, _ body: [UInt8]) throws(HTTPError) {
        let parts = header.split(separator: " ")
        guard parts.count == 2, let expected = Data(base64Encoded: String(parts[1])) else {
            throw HTTPError.badRequest("Upload-Checksum must be '<algorithm> <base64 digest>'.")
        }
        let actual: [UInt8]
        switch parts[0].lowercased() {
        case "sha1": actual = Digest.sha1(body)
        case "sha256": actual = Digest.sha256(body)
        default: throw HTTPError.badRequest("Upload-Checksum algorithm must be sha1 or sha256.")
        }
        guard Digest.constantTimeEqual(actual, Array(expected)) else {
            throw HTTPError(
                status: 460, title: "Checksum Mismatch",
                detail: "The body does not match Upload-Checksum; nothing was stored. Send it again.")
        }
    }
}
