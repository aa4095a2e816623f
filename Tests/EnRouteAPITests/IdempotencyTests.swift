import Foundation
import Testing
import EnRouteModels
import EnRouteDomain
@testable import EnRouteAPI
import Synchronization
import TestSupport

@Suite struct IdempotencyTests {
    @Test func theFirstResponseIsReplayedUnchangedOnRetry() async throws {
        let backend = TestBackend()
        let token = backend.token("c1", .customer)
        let body = try await backend.rideBody("c1")
        let first = await backend.call(
            "POST", "/v1/trips", token: token, json: body, headers: ["Idempotency-Key": "key-00000001"])
        await backend.clock.advance(by: .seconds(30))
        let again = await backend.call(
            "POST", "/v1/trips", token: token, json: body, headers: ["Idempotency-Key": "key-00000001"])
        #expect(first.status == 201)
        #expect(again.status == 201)
        #expect(again.body == first.body)
        #expect(again.headers["Idempotent-Replayed"] == "true")
        #expect(try backend.store.trips(status: nil, limit: 10).count == 1)
    }

    /// A key remembers its body as the SHA-256 in lowercase hex (keys stored by earlier builds compare equal).
    @Test func theFingerprintIsTheBodysSHA256InLowercaseHex() {
        #expect(
            IdempotencyMiddleware.fingerprint(Array("abc".utf8))
                == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(
            IdempotencyMiddleware.fingerprint([]) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    }

    @Test func aTripIsRenderedOnceForTheStoredAnswerAndTheResponse() {
        let renders = Atomic(0)
        let once = IdempotencyMiddleware.RenderedOnce { result in
            let n = renders.add(1, ordering: .relaxed).newValue
            return StoredResponse(
                status: (try? result.get()) == nil ? 409 : 201, contentType: "application/json",
                body: Array("render \(n)".utf8))
        }
        var trip = TripRecord(
            id: "t1", kind: .ride, status: .ride(.searching), customerId: "c1",
            pickup: Coordinate(lat: 60.1699, lng: 24.9384),
            dropoff: Coordinate(lat: 60.1841, lng: 24.9497), createdAt: Date(timeIntervalSince1970: 1_792_520_000))
        let stored = once.render(.success(trip))
        #expect(once.render(.success(trip)) == stored, "the response is the stored answer")
        #expect(renders.load(ordering: .relaxed) == 1)
        trip.version += 1
        #expect(once.render(.success(trip)) != stored, "another trip is rendered afresh")
        _ = once.render(.failure(.contended))
        _ = once.render(.failure(.contended))
        #expect(renders.load(ordering: .relaxed) == 4, "refusals are rendered each time")
    }

    @Test func aStoredErrorIsReplayedToo() async throws {
        let backend = TestBackend()
        let token = backend.token("c1", .customer)
        _ = try await backend.requestRide("c1")
        // A second active ride is refused with 409, and that answer is what the key remembers.
        let body = try await backend.rideBody("c1")
        let refused = await backend.call(
            "POST", "/v1/trips", token: token, json: body, headers: ["Idempotency-Key": "key-refused"])
        #expect(refused.status == 409)
        let replay = await backend.call(
            "POST", "/v1/trips", token: token, json: body, headers: ["Idempotency-Key": "key-refused"])
        #expect(replay.status == 409)
        #expect(replay.body == refused.body)
    }

    @Test func theSameKeyWithAnotherBodyIs422() async throws {
        let backend = TestBackend()
        let token = backend.token("c1", .customer)
        let first = await backend.call(
            "POST", "/v1/trips", token: token, json: try await backend.rideBody("c1"),
            headers: ["Idempotency-Key": "key-00000002"])
        #expect(first.status == 201)
        // Another body that would be valid on its own (its own quote, for another product).
        let other = try await backend.rideBody(
            "c1", pickup: TestBackend.pickup, dropoff: TestBackend.dropoff, product: "xl")
        let r = await backend.call(
            "POST", "/v1/trips", token: token, json: other, headers: ["Idempotency-Key": "key-00000002"])
        #expect(r.status == 422)
        #expect(try backend.store.trips(status: nil, limit: 10).count == 1)
    }

    @Test func aRetryWhileTheFirstIsRunningGets409() async throws {
        let backend = TestBackend()
        let scope = IdempotencyScope(accountId: "c1", method: "POST", path: "/v1/trips", key: "key-inflight")
        let context = IdempotencyContext(
            scope: scope, fingerprint: "f", render: { _ in StoredResponse(status: 201, contentType: "", body: []) })
        #expect(try await backend.service.claim(context) == .proceed)
        #expect(try await backend.service.claim(context) == .inFlight)
        // A claim left by a request that died is taken over after the lock timeout.
        await backend.clock.advance(by: .seconds(61))
        #expect(try await backend.service.claim(context) == .proceed)
    }

    @Test func keysAreScopedToTheAccount() async throws {
        let backend = TestBackend()
        let a = await backend.call(
            "POST", "/v1/trips", token: backend.token("c1", .customer), json: try await backend.rideBody("c1"),
            headers: ["Idempotency-Key": "shared-key-1"])
        let b = await backend.call(
            "POST", "/v1/trips", token: backend.token("c2", .customer), json: try await backend.rideBody("c2"),
            headers: ["Idempotency-Key": "shared-key-1"])
        #expect(a.status == 201 && b.status == 201)
        #expect(json(a.body)["id"] as? String != json(b.body)["id"] as? String)
    }

    @Test func keysExpireAfter24Hours() async throws {
        let backend = TestBackend()
        let token = backend.token("c1", .customer)
        let first = await backend.call(
            "POST", "/v1/orders", token: token, json: try await backend.orderBody("c1"),
            headers: ["Idempotency-Key": "order-key-1"])
        await backend.clock.advance(by: .seconds(24 * 3600 + 1))
        // The first quote ran out long ago: the later order names a fresh one (under a live key that body would be a
        // 422).
        let later = await backend.call(
            "POST", "/v1/orders", token: backend.token("c1", .customer), json: try await backend.orderBody("c1"),
            headers: ["Idempotency-Key": "order-key-1"])
        #expect(first.status == 201 && later.status == 201)
        #expect(json(first.body)["orderId"] as? String != json(later.body)["orderId"] as? String)
    }

    @Test func createsWithoutAKeyAre400AndChangeNothing() async throws {
        let backend = TestBackend()
        let ride = await backend.call(
            "POST", "/v1/trips", token: backend.token("c1", .customer), json: try await backend.rideBody("c1"))
        let order = await backend.call(
            "POST", "/v1/orders", token: backend.token("c1", .customer), json: try await backend.orderBody("c1"))
        #expect(ride.status == 400 && order.status == 400)
        #expect(ride.headers["Content-Type"] == "application/problem+json")
        #expect(try backend.store.trips(status: nil, limit: 10).isEmpty)
    }

    /// 200 concurrent creates with one key make exactly one trip, and every answer is that trip or a 409.
    @Test func twoHundredConcurrentCreatesWithOneKeyMakeOneTrip() async throws {
        let backend = TestBackend()
        let token = backend.token("c1", .customer)
        let body = try await backend.rideBody("c1")
        let results = await withTaskGroup(of: (Int, String?).self) { group in
            for _ in 0..<200 {
                group.addTask {
                    let r = await backend.call(
                        "POST", "/v1/trips", token: token, json: body, headers: ["Idempotency-Key": "one-key-for-all"])
                    return (r.status, json(r.body)["id"] as? String)
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(try backend.store.trips(status: nil, limit: 500).count == 1)
        let ids = Set(results.compactMap(\.1))
        #expect(ids.count == 1)
        #expect(results.allSatisfy { $0.0 == 201 || $0.0 == 409 })
        #expect(results.contains { $0.0 == 201 })
    }
}
