import Foundation
import Testing
import HTTPTransport
import EnRouteModels
import EnRouteCrypto
@testable import ProviderKit
import TestSupport
import Synchronization

/// The proof capture queue against the real server in-process: a photo captured at the door, named by the
/// `delivered` step at once, uploaded as tus in checksummed chunks through a transport that cuts it, resumed from
/// the server's offset after every cut and after app restarts.
@Suite struct ProofCaptureQueueTests {
    /// A PNG-headed photo of `size` bytes, its body from `seed`.
    static func photo(size: Int, seed: UInt64) -> [UInt8] {
        var rng = SeededRandom(seed: seed)
        return [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
            + (8..<size).map { _ in UInt8.random(in: 0...255, using: &rng) }
    }

    /// A delivery held by p1 and on its way; the provider's snapshot of it.
    static func deliveryOnTheWay(_ backend: TestBackend) async throws -> TripSnapshot {
        let id = try await backend.placedOrder()
        let merchant = backend.token("m1", .merchant)
        guard await backend.assign(id, to: "p1").status == 200 else { throw BackendFailure("assign") }
        _ = await backend.call(
            "POST", APIPath.merchantOrderAccept(id), token: merchant, json: #"{"preparationMinutes":5}"#)
        _ = await backend.call("POST", APIPath.merchantOrderReady(id), token: merchant)
        let r = await backend.call(
            "POST", APIPath.providerTripSteps(id), token: backend.token("p1", .provider),
            json: #"{"changeId":"otw","step":"onTheWay","deviceTime":"2026-10-20T18:30:00Z"}"#)
        guard r.status == 200 else { throw BackendFailure("onTheWay: \(r.status)") }
        return try WireCoding.decoder().decode(TripSnapshot.self, from: Data(r.body))
    }

    /// The issue's test: 20 cuts at random byte offsets (the server keeping what reached it, or nothing, or the
    /// answer lost), three app restarts among them; the upload completes and the customer's proof is byte for byte
    /// the photo, with the SHA-256 the server states.
    @Test(arguments: [7, 8, 9] as [UInt64])
    func anUploadCutAtRandomOffsetsTwentyTimesResumesAndCompletesWithTheRightChecksum(seed: UInt64) async throws {
        let backend = TestBackend()
        let trip = try await Self.deliveryOnTheWay(backend)
        let photo = Self.photo(size: 150_000, seed: seed)
        var rng = SeededRandom(seed: seed)
        let cuts = (0..<20).map { _ in Int.random(in: 1..<photo.count, using: &rng) }
        let transport = CuttingHTTPClient(inner: InProcessHTTPClient(router: backend.router), cuts: cuts, seed: seed)
        let (_, server) = backend.client("p1", .provider)
        let store = TemporaryStorePath()
        defer { store.remove() }
        let ids = SequentialIDs("proof")
        var device = try ProviderStore(path: store.path)
        var queue = ProofCaptureQueue(
            store: device, client: transport, server: server, chunkSize: 8 * 1024, makeID: ids.maker)
        let proofId = try queue.capture(photo, kind: .photo, contentType: "image/png", tripId: trip.id)
        let outbox = StepOutbox(
            store: device, positions: try PointBuffer(store: device, makeID: ids.maker), dates: backend.clock.dates,
            makeID: ids.maker)
        let delivered = try outbox.reportStep(.delivered, on: trip, proofId: proofId).change
        #expect(delivered.request.proofId == proofId)
        // The step goes before the proof: accepted while the upload has not even started.
        let applied = try await RemoteProviderAPI(client: InProcessHTTPClient(router: backend.router), server: server)
            .send(delivered)
        guard case .applied(let after) = applied else {
            Issue.record("the delivered step was not applied: \(applied)"); return
        }
        #expect(after.status == "delivered")
        #expect(
            await backend.call("GET", APIPath.tripProof(trip.id), token: backend.token("c1", .customer)).status == 409)

        var interruptions = 0
        var passes = 0
        while try !queue.pending().isEmpty {
            passes += 1
            guard passes < 200 else { Issue.record("no progress after \(passes) passes"); return }
            let report = await queue.sync()
            #expect(report.refused.isEmpty)
            if report.interrupted {
                interruptions += 1
                if [5, 11, 17].contains(interruptions) {
                    // The app is killed and started again on the same store.
                    device.close()
                    device = try ProviderStore(path: store.path)
                    queue = ProofCaptureQueue(
                        store: device, client: transport, server: server, chunkSize: 8 * 1024, makeID: ids.maker)
                }
            } else {
                #expect(report.uploaded == [proofId])
            }
        }
        #expect(interruptions == 20, "every cut met once")
        #expect(transport.remainingCuts == 0)
        #expect(
            transport.kinds.count == 3,
            "the server kept part of a chunk, none of it, and all of it with the answer lost: \(transport.kinds)")
        let proof = await backend.call("GET", APIPath.tripProof(trip.id), token: backend.token("c1", .customer))
        #expect(proof.status == 200)
        #expect(proof.body == photo)
        let sha = Digest.sha256(photo).map { String(format: "%02x", $0) }.joined()
        #expect(proof.headers["ETag"] == "\"\(sha)\"")
    }

    @Test func aProofTheServerWillNeverTakeLeavesTheQueueWithTheReason() async throws {
        let backend = TestBackend()
        let trip = try await Self.deliveryOnTheWay(backend)
        let (http, server) = backend.client("p1", .provider)
        let store = TemporaryStorePath()
        defer { store.remove() }
        let queue = ProofCaptureQueue(
            store: try ProviderStore(path: store.path), client: http, server: server, chunkSize: 1024,
            makeID: SequentialIDs("p").maker)
        let id = try queue.capture(
            Array("GIF89a not a png".utf8), kind: .photo, contentType: "image/png", tripId: trip.id)
        let report = await queue.sync()
        #expect(report.refused[id]?.contains("not a image/png") == true)
        #expect(try queue.pending().isEmpty)
    }

    @Test func sha1MatchesTheStandardVectors() {
        func hex(_ b: [UInt8]) -> String { b.map { String(format: "%02x", $0) }.joined() }
        #expect(hex(SHA1.digest(Array("abc".utf8))) == "a9993e364706816aba3e25717850c26c9cd0d89d")
        #expect(hex(SHA1.digest([UInt8]())) == "da39a3ee5e6b4b0d3255bfef95601890afd80709")
        let long = Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)
        #expect(hex(SHA1.digest(long)) == "84983e441c3bd26ebaae4aa1f95129e5e54670f1")
        for size in [55, 56, 63, 64, 65, 1000] {
            let bytes = (0..<size).map { UInt8(truncatingIfNeeded: $0) }
            #expect(SHA1.digest(bytes) == Digest.sha1(bytes), "\(size) bytes")
        }
    }
}

/// A transport that cuts tus PATCHes at given byte offsets of the upload: when a PATCH spans the next cut, the server
/// gets the bytes before it (a cut mid-body, kept as tus servers keep what arrived), or nothing, or all of it with the
/// answer lost; the client then sees a broken connection. Every cut is met once.
final class CuttingHTTPClient: HTTPClient, @unchecked Sendable {
    enum Kind: String, Hashable { case partial, nothing, answerLost }
    private let inner: any HTTPClient
    private let state: Mutex<(cuts: [Int], rng: SeededRandom, kinds: Set<Kind>)>

    init(inner: any HTTPClient, cuts: [Int], seed: UInt64) {
        self.inner = inner
        state = Mutex((cuts.sorted(), SeededRandom(seed: seed ^ 0x5eed), []))
    }

    var remainingCuts: Int { state.withLock { $0.cuts.count } }
    var kinds: Set<Kind> { state.withLock { $0.kinds } }

    func send(_ request: HTTPClientRequest) async throws -> HTTPClientResponse {
        guard request.method == "PATCH", let offset = Int(request.headers["Upload-Offset"] ?? ""),
            let body = request.body
        else {
            return try await inner.send(request)
        }
        let end = offset + body.count
        let cut = state.withLock { s -> (Int, Kind)? in
            guard let index = s.cuts.firstIndex(where: { $0 > offset && $0 <= end }) else { return nil }
            let at = s.cuts.remove(at: index)
            var kind: Kind =
                switch Int.random(in: 0..<4, using: &s.rng) {
                case 0: .nothing;
                case 1: .answerLost;
                default: .partial
                }
            // A whole chunk stored would step over a later cut inside it: that cut must still be met.
            if kind == .answerLost, s.cuts.contains(where: { $0 > offset && $0 <= end }) { kind = .partial }
            s.kinds.insert(kind)
            return (at, kind)
        }
        guard let (at, kind) = cut else { return try await inner.send(request) }
        switch kind {
        case .nothing: break
        case .answerLost: _ = try await inner.send(request)
        case .partial:
            var prefix = request
            let kept = Array(body.prefix(at - offset))
            prefix.body = Data(kept)
            prefix.headers["Upload-Checksum"] = "sha1 " + Data(Digest.sha1(kept)).base64EncodedString()
            _ = try await inner.send(prefix)
        }
        throw HTTPClientError.network("cut at byte \(at)")
    }

    func events(_ request: HTTPClientRequest) -> AsyncThrowingStream<ServerSentEvent, any Error> {
        inner.events(request)
    }
}
