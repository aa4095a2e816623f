import Foundation
import Testing
import HTTPTransport
import CurlTransport
import EnRouteModels
import EnRouteAPI
import EnRouteCrypto
import TestSupport

/// The real `enroute serve` killed with SIGKILL in the middle of a proof upload, restarted on the same database and
/// proof directory: `HEAD` tells where to resume, the rest goes up, and the customer reads exactly the photo.
@Suite(.serialized) struct ProofKillTests {
    @Test func aProofUploadResumesAfterTheServerIsKilledMidUpload() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent(
            "enroute-proof-kill-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let database = dir.appendingPathComponent("enroute.sqlite").path
        let auth = Authenticator(secret: DurabilityTests.secret, now: { Date() })
        let http = CurlHTTPClient(defaultTimeout: .seconds(10))
        let customer = try auth.token(account: "kc1", role: .customer),
            provider = try auth.token(account: "kp1", role: .provider)
        let merchant = try auth.token(account: "m1", role: .merchant), ops = try auth.token(account: "ops1", role: .ops)
        var rng = SeededRandom(seed: 15)
        let photo: [UInt8] =
            [0xFF, 0xD8, 0xFF, 0xE0] + (4..<3_000_000).map { _ in UInt8.random(in: 0...255, using: &rng) }
        let chunk = 256 * 1024

        var server = try DurabilityTests.Server(database: database)
        func call(
            _ token: String, _ method: String, _ path: String, json: String? = nil, key: String? = nil
        ) async throws -> HTTPClientResponse {
            try await DurabilityTests.call(http, port: server.port, token: token, method, path, json: json, key: key)
        }
        func tus(
            _ method: String, _ path: String, headers: [String: String] = [:], body: [UInt8]? = nil
        ) async throws -> HTTPClientResponse {
            try await http.send(
                HTTPClientRequest(
                    method: method, url: URL(string: "http://127.0.0.1:\(server.port)\(path)")!,
                    headers: headers.merging(["Authorization": "Bearer \(provider)", "Tus-Resumable": "1.0.0"]) {
                        a, _ in a
                    },
                    body: body.map { Data($0) }, timeout: .seconds(10)))
        }
        func patch(_ location: String, at offset: Int) async throws -> HTTPClientResponse {
            let bytes = Array(photo[offset..<min(photo.count, offset + chunk)])
            return try await tus(
                "PATCH", location,
                headers: [
                    "Upload-Offset": String(offset), "Content-Type": "application/offset+octet-stream",
                    "Upload-Checksum": "sha1 " + Data(Digest.sha1(bytes)).base64EncodedString(),
                ], body: bytes)
        }

        // A delivery on its way with kp1.
        #expect(
            [200, 201].contains(
                try await call(customer, "POST", "/v1/payment-methods", json: #"{"token":"pm_card_visa"}"#).status))
        let body = try #require(try await DurabilityTests.quotedOrder(http, port: server.port, token: customer))
        let order = try await call(customer, "POST", "/v1/orders", json: body, key: "proof-kill-order").decode(
            TrackingDTO.self
        ).orderId
        _ = try await call(merchant, "POST", APIPath.merchantOrderAccept(order), json: #"{"preparationMinutes":5}"#)
        #expect(try await call(ops, "POST", APIPath.opsTripAssign(order), json: #"{"providerId":"kp1"}"#).status == 200)
        _ = try await call(merchant, "POST", APIPath.merchantOrderReady(order))
        #expect(
            try await call(
                provider, "POST", APIPath.providerTripSteps(order),
                json: #"{"changeId":"k1","step":"onTheWay","deviceTime":"2026-10-20T18:40:00Z"}"#
            ).status == 200)

        // The engine passes OPTIONS and HEAD through like any method.
        let options = try await http.send(
            HTTPClientRequest(method: "OPTIONS", url: URL(string: "http://127.0.0.1:\(server.port)\(APIPath.uploads)")!)
        )
        #expect(options.status == 204 && options.header("tus-extension") == "creation,checksum,termination")
        func b64(_ s: String) -> String { Data(s.utf8).base64EncodedString() }
        let created = try await tus(
            "POST", APIPath.uploads,
            headers: [
                "Upload-Length": String(photo.count),
                "Upload-Metadata":
                    "tripId \(b64(order)),kind \(b64("photo")),contentType \(b64("image/jpeg")),proofId "
                    + "\(b64("kill-proof"))",
            ])
        #expect(created.status == 201)
        let location = try #require(created.header("location"))
        #expect(
            try await call(
                provider, "POST", APIPath.providerTripSteps(order),
                json:
                    #"{"changeId":"k2","step":"delivered","deviceTime":"2026-10-20T18:50:00Z","proofId":"kill-proof"}"#
            ).status == 200)
        var acknowledged = 0
        for _ in 0..<4 {
            let r = try await patch(location, at: acknowledged)
            #expect(r.status == 204)
            acknowledged = Int(r.header("upload-offset") ?? "") ?? -1
        }
        #expect(acknowledged == 4 * chunk)
        // One more chunk in flight as the server dies: it may or may not have been stored, never half-acknowledged.
        let port = server.port, start = acknowledged, last = Array(photo[start..<start + chunk])
        let inFlight = Task {
            try? await http.send(
                HTTPClientRequest(
                    method: "PATCH", url: URL(string: "http://127.0.0.1:\(port)\(location)")!,
                    headers: [
                        "Authorization": "Bearer \(provider)", "Tus-Resumable": "1.0.0", "Upload-Offset": String(start),
                        "Content-Type": "application/offset+octet-stream",
                    ], body: Data(last), timeout: .seconds(10)))
        }
        server.kill()
        _ = await inFlight.value

        server = try DurabilityTests.Server(database: database, seed: false)
        let head = try await tus("HEAD", location)
        #expect(head.status == 200)
        var offset = try #require(Int(head.header("upload-offset") ?? ""))
        #expect(
            offset == acknowledged || offset == acknowledged + chunk, "resumes at an acknowledged boundary: \(offset)")
        while offset < photo.count {
            let r = try await patch(location, at: offset)
            try #require(r.status == 204, "PATCH at \(offset): \(r.status) \(String(decoding: r.body, as: UTF8.self))")
            offset = Int(r.header("upload-offset") ?? "") ?? -1
        }
        let proof = try await call(customer, "GET", APIPath.tripProof(order))
        #expect(proof.status == 200)
        #expect(Array(proof.body) == photo)
        #expect(proof.header("etag") == "\"\(EnRouteAPI.sha256Hex(photo))\"")
        server.stop()
    }
}
