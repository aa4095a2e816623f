import Foundation
import Testing
import EnRouteDomain
import EnRouteModels
import EnRouteCrypto
import HTTPEngine
import TestSupport

/// Proof of delivery as a tus 1.0 upload through the router: capabilities, creation, append at the server's offset,
/// checksums, termination, the type and size limits, who may upload and read, and the `delivered` step's `proofId`.
@Suite struct ProofUploadTests {
    static let png: [UInt8] =
        [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + (0..<5000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }

    /// A backend with a delivery held by p1, on its way.
    static func makeSUT() async throws -> (TestBackend, tripId: String) {
        let backend = TestBackend()
        let order = try await backend.placeOrder()
        let merchant = backend.token("m1", .merchant)
        #expect(await backend.assign(order.orderId, to: "p1").status == 200)
        _ = await backend.call(
            "POST", APIPath.merchantOrderAccept(order.orderId), token: merchant, json: #"{"preparationMinutes":5}"#)
        _ = await backend.call("POST", APIPath.merchantOrderReady(order.orderId), token: merchant)
        #expect(await backend.step(order.orderId, "onTheWay").status == 200)
        return (backend, order.orderId)
    }

    @Test func optionsAdvertisesTheTusVersionExtensionsSizeAndChecksums() async throws {
        let backend = TestBackend()
        let r = await backend.tus("OPTIONS", APIPath.uploads, token: nil, tusHeader: false)
        #expect(r.status == 204)
        #expect(r.headers["Tus-Version"] == "1.0.0")
        #expect(r.headers["Tus-Extension"] == "creation,checksum,termination")
        #expect(r.headers["Tus-Max-Size"] == String(10 * 1024 * 1024))
        #expect(r.headers["Tus-Checksum-Algorithm"] == "sha1,sha256")
    }

    @Test func aRequestWithoutTusResumableIsRefusedNamingTheVersion() async throws {
        let (backend, tripId) = try await Self.makeSUT()
        let r = await backend.tus(
            "POST", APIPath.uploads, token: backend.token("p1", .provider), tusHeader: false,
            headers: ["Upload-Length": "10", "Upload-Metadata": Self.metadata(tripId)])
        #expect(r.status == 412 && r.headers["Tus-Version"] == "1.0.0" && r.headers["Tus-Resumable"] == "1.0.0")
    }

    @Test func anUploadIsCreatedAppendedInChunksAndReadByTheCustomerAndOps() async throws {
        let (backend, tripId) = try await Self.makeSUT()
        let location = try await backend.createUpload(tripId, length: Self.png.count, proofId: "proof-1")
        #expect(location == "/v1/uploads/proof-1")
        let head = await backend.tus("HEAD", location, token: backend.token("p1", .provider))
        #expect(
            head.status == 200 && head.headers["Upload-Offset"] == "0"
                && head.headers["Upload-Length"] == String(Self.png.count))
        #expect(head.headers["Cache-Control"] == "no-store")
        #expect(await backend.step(tripId, "delivered", proofId: "proof-1").status == 200)
        #expect(
            await backend.tus("GET", APIPath.tripProof(tripId), token: backend.token("c1", .customer)).status == 409,
            "still uploading")
        let first = await backend.patch(location, offset: 0, Array(Self.png[..<2000]))
        #expect(
            first.status == 204 && first.headers["Upload-Offset"] == "2000" && first.headers["Tus-Resumable"] == "1.0.0"
        )
        let rest = await backend.patch(location, offset: 2000, Array(Self.png[2000...]), checksum: "sha1")
        #expect(rest.status == 204 && rest.headers["Upload-Offset"] == String(Self.png.count))
        for (account, role) in [("c1", Party.customer), ("ops", .ops)] {
            let proof = await backend.tus("GET", APIPath.tripProof(tripId), token: backend.token(account, role))
            #expect(proof.status == 200)
            #expect(proof.body == Self.png)
            #expect(proof.headers["Content-Type"] == "image/png")
            #expect(
                proof.headers["ETag"] == "\"\(Digest.sha256(Self.png).map { String(format: "%02x", $0) }.joined())\"")
        }
        for (account, role) in [("c2", Party.customer), ("p1", .provider), ("p2", .provider), ("m2", .merchant)] {
            #expect(
                await backend.tus("GET", APIPath.tripProof(tripId), token: backend.token(account, role)).status == 404,
                "\(account)")
        }
    }

    @Test func aPatchAtAnotherOffsetIsAConflictAndStoresNothing() async throws {
        let (backend, tripId) = try await Self.makeSUT()
        let location = try await backend.createUpload(tripId, length: Self.png.count)
        #expect(await backend.patch(location, offset: 0, Array(Self.png[..<100])).status == 204)
        let wrong = await backend.patch(location, offset: 50, Array(Self.png[50..<150]))
        #expect(wrong.status == 409)
        #expect(
            await backend.tus("HEAD", location, token: backend.token("p1", .provider)).headers["Upload-Offset"] == "100"
        )
    }

    @Test func aChecksumMismatchIs460AndAnUnknownAlgorithm400() async throws {
        let (backend, tripId) = try await Self.makeSUT()
        let location = try await backend.createUpload(tripId, length: Self.png.count)
        let bad = await backend.patch(
            location, offset: 0, Array(Self.png[..<100]),
            extra: ["Upload-Checksum": "sha1 " + Data(Digest.sha1([1, 2, 3])).base64EncodedString()])
        #expect(bad.status == 460)
        #expect(
            await backend.patch(location, offset: 0, Array(Self.png[..<100]), extra: ["Upload-Checksum": "md5 AAAA"])
                .status == 400)
        #expect(
            await backend.tus("HEAD", location, token: backend.token("p1", .provider)).headers["Upload-Offset"] == "0")
        #expect(await backend.patch(location, offset: 0, Array(Self.png[..<100]), checksum: "sha256").status == 204)
    }

    @Test func aPatchMustBeOffsetOctetStream() async throws {
        let (backend, tripId) = try await Self.makeSUT()
        let location = try await backend.createUpload(tripId, length: Self.png.count)
        #expect(
            await backend.patch(location, offset: 0, [1, 2], contentType: "application/octet-stream").status == 415)
    }

    @Test func onlyTheTripsProviderUploadsAndAppends() async throws {
        let (backend, tripId) = try await Self.makeSUT()
        let meta = Self.metadata(tripId)
        #expect(
            await backend.tus(
                "POST", APIPath.uploads, token: backend.token("p2", .provider),
                headers: ["Upload-Length": "100", "Upload-Metadata": meta]
            ).status == 404)
        #expect(
            await backend.tus(
                "POST", APIPath.uploads, token: backend.token("c1", .customer),
                headers: ["Upload-Length": "100", "Upload-Metadata": meta]
            ).status == 403)
        let location = try await backend.createUpload(tripId, length: Self.png.count)
        #expect(await backend.tus("HEAD", location, token: backend.token("p2", .provider)).status == 404)
        #expect(await backend.patch(location, offset: 0, [1], provider: "p2").status == 404)
    }

    @Test(arguments: [
        ("photo", "image/svg+xml", 100, 415), ("signature", "image/jpeg", 100, 415),
        ("photo", "image/png", 10 * 1024 * 1024 + 1, 413),
        ("signature", "image/png", 1024 * 1024 + 1, 413), ("video", "image/png", 100, 400),
    ])
    func typesAndSizesAreLimitedPerKind(_ kind: String, _ type: String, _ length: Int, _ status: Int) async throws {
        let (backend, tripId) = try await Self.makeSUT()
        let r = await backend.tus(
            "POST", APIPath.uploads, token: backend.token("p1", .provider),
            headers: [
                "Upload-Length": String(length), "Upload-Metadata": Self.metadata(tripId, kind: kind, type: type),
            ])
        #expect(r.status == status)
    }

    /// The magic bytes are checked once the upload is complete: a "PNG" that is not one is refused and dropped.
    @Test func contentThatIsNotItsTypeIsRefusedOnceCompleteAndDropped() async throws {
        let (backend, tripId) = try await Self.makeSUT()
        let location = try await backend.createUpload(tripId, length: 4)
        let r = await backend.patch(location, offset: 0, Array("GIF8".utf8))
        #expect(r.status == 422)
        #expect(await backend.tus("HEAD", location, token: backend.token("p1", .provider)).status == 404)
        let svg = Array(
            #"<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg"><path d="M0 0L9 9"/></svg>"#.utf8)
        let signature = try await backend.createUpload(
            tripId, length: svg.count, kind: "signature", type: "image/svg+xml")
        #expect(await backend.patch(signature, offset: 0, svg).status == 204)
    }

    @Test func terminationDropsTheUpload() async throws {
        let (backend, tripId) = try await Self.makeSUT()
        let location = try await backend.createUpload(tripId, length: Self.png.count)
        #expect(await backend.tus("DELETE", location, token: backend.token("p1", .provider)).status == 204)
        #expect(await backend.tus("HEAD", location, token: backend.token("p1", .provider)).status == 404)
    }

    @Test func theProofIdGoesOnlyOnTheDeliveredStepAndOnlyForThisTrip() async throws {
        let (backend, tripId) = try await Self.makeSUT()
        #expect(await backend.step(tripId, "arriving", proofId: "proof-1").status == 422)
        #expect(await backend.step(tripId, "delivered", proofId: "no spaces allowed").status == 422)
        // p1's upload for another delivery cannot be this one's proof.
        let other = try await backend.placeOrder("c2")
        _ = await backend.assign(other.orderId, to: "p1")
        _ = try await backend.createUpload(other.orderId, length: 100, proofId: "other-proof")
        #expect(await backend.step(tripId, "delivered", proofId: "other-proof").status == 422)
        #expect(await backend.step(tripId, "delivered", proofId: "mine").status == 200)
        #expect(
            await backend.tus("GET", APIPath.tripProof(tripId), token: backend.token("c1", .customer)).status == 409)
    }

    /// A proof is recorded only by the `delivered` step that applies: one refused (an order still being picked)
    /// records nothing, even with the upload complete.
    @Test func aRefusedDeliveredStepRecordsNoProof() async throws {
        let backend = TestBackend()
        let order = try await backend.placeOrder()
        #expect(await backend.assign(order.orderId, to: "p1").status == 200)
        let merchant = backend.token("m1", .merchant)
        _ = await backend.call(
            "POST", APIPath.merchantOrderAccept(order.orderId), token: merchant,
            json: #"{"preparationMinutes":5}"#)
        let location = try await backend.createUpload(order.orderId, length: Self.png.count, proofId: "early")
        #expect(await backend.patch(location, offset: 0, Self.png).status == 204)
        #expect(await backend.step(order.orderId, "delivered", proofId: "early").status == 409, "still picking")
        let proof = await backend.tus("GET", APIPath.tripProof(order.orderId), token: backend.token("c1", .customer))
        #expect(proof.status == 404)
    }

    /// A `delivered` step sent again with another proof after the delivery is refused, and the proof stays the first.
    @Test func aRefusedSecondDeliveredStepLeavesTheFirstProof() async throws {
        let (backend, tripId) = try await Self.makeSUT()
        let other = Self.png + [0x00]
        for (proofId, bytes) in [("first", Self.png), ("second", other)] {
            let location = try await backend.createUpload(tripId, length: bytes.count, proofId: proofId)
            #expect(await backend.patch(location, offset: 0, bytes).status == 204)
        }
        #expect(await backend.step(tripId, "delivered", proofId: "first").status == 200)
        #expect(await backend.step(tripId, "delivered", proofId: "second").status == 409)
        let proof = await backend.tus("GET", APIPath.tripProof(tripId), token: backend.token("c1", .customer))
        #expect(proof.status == 200 && proof.body == Self.png)
    }

    /// A resent creation with the client's proofId answers the same upload and where it stands, so a client that
    /// lost the first answer goes on from there.
    @Test func creatingAgainWithTheSameProofIdAnswersTheSameUpload() async throws {
        let (backend, tripId) = try await Self.makeSUT()
        let location = try await backend.createUpload(tripId, length: Self.png.count, proofId: "again")
        #expect(await backend.patch(location, offset: 0, Array(Self.png[..<10])).status == 204)
        let resent = await backend.tus(
            "POST", APIPath.uploads, token: backend.token("p1", .provider),
            headers: [
                "Upload-Length": String(Self.png.count), "Upload-Metadata": Self.metadata(tripId, proofId: "again"),
            ])
        #expect(
            resent.status == 201 && resent.headers["Location"] == location && resent.headers["Upload-Offset"] == "10")
        let clash = await backend.tus(
            "POST", APIPath.uploads, token: backend.token("p1", .provider),
            headers: ["Upload-Length": "11", "Upload-Metadata": Self.metadata(tripId, proofId: "again")])
        #expect(clash.status == 409)
    }

    /// An upload left unfinished for a day is dropped with its bytes; a complete one stays.
    @Test func anAbandonedUploadIsPurgedAfterADayAndACompleteOneStays() async throws {
        let (backend, tripId) = try await Self.makeSUT()
        let abandoned = try await backend.createUpload(tripId, length: Self.png.count, proofId: "abandoned")
        #expect(await backend.patch(abandoned, offset: 0, Array(Self.png[..<100])).status == 204)
        let done = try await backend.createUpload(tripId, length: Self.png.count, proofId: "done")
        #expect(await backend.patch(done, offset: 0, Self.png).status == 204)
        await backend.clock.advance(by: .seconds(86_000))
        #expect(
            try await backend.backend.proofs.purgeAbandoned(
                createdBefore: backend.clock.date.addingTimeInterval(-86_400)) == 0)
        await backend.clock.advance(by: .seconds(401))
        #expect(
            try await backend.backend.proofs.purgeAbandoned(
                createdBefore: backend.clock.date.addingTimeInterval(-86_400)) == 1)
        #expect(await backend.tus("HEAD", abandoned, token: backend.token("p1", .provider)).status == 404)
        #expect(await backend.tus("HEAD", done, token: backend.token("p1", .provider)).status == 200)
    }

    static func metadata(
        _ tripId: String, kind: String = "photo", type: String = "image/png", proofId: String? = nil
    ) -> String {
        func b64(_ s: String) -> String { Data(s.utf8).base64EncodedString() }
        return ["tripId \(b64(tripId))", "kind \(b64(kind))", "contentType \(b64(type))"].joined(separator: ",")
            + (proofId.map { ",proofId \(b64($0))" } ?? "")
    }
}

extension TestBackend {
    /// A tus request through the router: `Tus-Resumable: 1.0.0` unless told not to, a raw body.
    func tus(
        _ method: String, _ path: String, token: String?, tusHeader: Bool = true, headers: [String: String] = [:],
        body: [UInt8] = []
    ) async -> (status: Int, headers: HTTPHeaders, body: [UInt8]) {
        var h = HTTPHeaders(headers.map { ($0.key, $0.value) })
        if let token { h.add("Authorization", "Bearer \(token)") }
        if tusHeader { h.add("Tus-Resumable", "1.0.0") }
        let response = await router.respond(to: HTTPRequest(method: method, path: path, headers: h, body: body))
        return (response.status, response.headers, response.bodyBytes)
    }

    /// Creates an upload as p1 and returns its Location.
    func createUpload(
        _ tripId: String, length: Int, proofId: String? = nil, kind: String = "photo", type: String = "image/png"
    ) async throws -> String {
        let r = await tus(
            "POST", APIPath.uploads, token: token("p1", .provider),
            headers: [
                "Upload-Length": String(length),
                "Upload-Metadata": ProofUploadTests.metadata(tripId, kind: kind, type: type, proofId: proofId),
            ])
        guard r.status == 201, let location = r.headers["Location"] else {
            throw Failure("create: \(r.status) \(String(decoding: r.body, as: UTF8.self))")
        }
        return location
    }

    /// A tus PATCH as `provider`, with an `Upload-Checksum` by `checksum` when given.
    func patch(
        _ location: String, offset: Int, _ bytes: [UInt8], provider: String = "p1", checksum: String? = nil,
        contentType: String = "application/offset+octet-stream", extra: [String: String] = [:]
    ) async -> (status: Int, headers: HTTPHeaders, body: [UInt8]) {
        var headers = ["Upload-Offset": String(offset), "Content-Type": contentType].merging(extra) { _, new in new }
        switch checksum {
        case "sha1": headers["Upload-Checksum"] = "sha1 " + Data(Digest.sha1(bytes)).base64EncodedString()
        case "sha256": headers["Upload-Checksum"] = "sha256 " + Data(Digest.sha256(bytes)).base64EncodedString()
        default: break
        }
        return await tus("PATCH", location, token: token(provider, .provider), headers: headers, body: bytes)
    }

    /// A provider step carrying a proof id.
    func step(_ trip: String, _ step: String, proofId: String) async -> (status: Int, body: [UInt8]) {
        let r = await call(
            "POST", APIPath.providerTripSteps(trip), token: token("p1", .provider),
            json:
                #"{"changeId":"\#(UUID().uuidString)","step":"\#(step)","deviceTime":"2026-10-20T18:40:00Z","#
                + #""proofId":"\#(proofId)"}"#
        )
        return (r.status, r.body)
    }
}
