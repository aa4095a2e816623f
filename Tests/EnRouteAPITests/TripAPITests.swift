import Foundation
import Testing
import EnRouteModels
import EnRouteDomain
import EnRouteAPI
import TestSupport

@Suite struct TripAPITests {
    @Test func aWholeRideThroughTheAPI() async throws {
        let backend = TestBackend()
        let trip = try await backend.requestRide()
        #expect(trip.state == .searching && trip.version == 1)
        let accept = await backend.assign(trip.id, to: "p1")
        #expect(accept.status == 200)
        for step in ["driverArrived", "onTrip", "completed"] {
            #expect(await backend.step(trip.id, step).status == 200, "\(step)")
        }
        let final = await backend.call("GET", "/v1/trips/\(trip.id)", token: backend.token("c1", .customer))
        let decoded = try WireCoding.decoder().decode(Trip.self, from: Data(final.body))
        #expect(decoded.state == .completed)
        #expect(decoded.version == 5)
        #expect(decoded.driver?.id == "p1")
        let log = try backend.store.changes(tripId: trip.id)
        #expect(log.map(\.version) == [1, 2, 3, 4, 5])
        #expect(log.map(\.status) == ["searching", "driverAssigned", "driverArrived", "onTrip", "completed"])
        // Ops handed the ride over (no dispatch runs here); the provider made every step after.
        #expect(log.map(\.actorRole) == [.customer, .ops, .provider, .provider, .provider])
        #expect(await backend.call("GET", "/v1/trips/active", token: backend.token("c1", .customer)).status == 204)
    }

    @Test func aRefusedMoveIs409WithTheRealTrip() async throws {
        let backend = TestBackend()
        let trip = try await backend.requestRide()
        let r = await backend.step(trip.id, "onTrip")  // not assigned to anyone yet: p1 cannot see it
        #expect(r.status == 404)
        _ = await backend.assign(trip.id, to: "p1")
        let early = await backend.step(trip.id, "completed")
        #expect(early.status == 409)
        let body = json(early.body)
        #expect(body["status"] as? Int == 409)
        #expect((body["trip"] as? [String: Any])?["status"] as? String == "driverAssigned")
        #expect((body["trip"] as? [String: Any])?["version"] as? Int == 2)
    }

    @Test func providerStepsAreIdempotentByChangeIdAndKeepTheDeviceTime() async throws {
        let backend = TestBackend()
        let trip = try await backend.requestRide()
        _ = await backend.assign(trip.id, to: "p1")
        let first = await backend.step(trip.id, "driverArrived", changeId: "chg-1", deviceTime: "2026-10-20T18:39:12Z")
        let resent = await backend.step(trip.id, "driverArrived", changeId: "chg-1", deviceTime: "2026-10-20T18:39:12Z")
        #expect(first.status == 200 && resent.status == 200)
        #expect(json(resent.body)["version"] as? Int == 3)
        let log = try backend.store.changes(tripId: trip.id)
        #expect(log.count == 3)
        #expect(log.last?.deviceTime == ISO8601.parse("2026-10-20T18:39:12Z"))
        #expect(log.last?.serverTime == backend.clock.date)
    }

    @Test func aLateStepIsAppliedIfTheStateStillAllowsItAndRefusedOtherwise() async throws {
        let backend = TestBackend()
        let order = try await backend.placeOrder()
        let merchant = backend.token("m1", .merchant)
        _ = await backend.assign(order.orderId, to: "p1")
        _ = await backend.call(
            "POST", "/v1/merchant/orders/\(order.orderId)/accept", token: merchant, json: #"{"preparationMinutes":10}"#)
        _ = await backend.call("POST", "/v1/merchant/orders/\(order.orderId)/ready", token: merchant)
        // Taps made in a basement arrive minutes later, in order: still allowed, so applied with their device times.
        await backend.clock.advance(by: .seconds(300))
        #expect(await backend.step(order.orderId, "onTheWay", deviceTime: "2026-10-20T18:30:00Z").status == 200)
        #expect(await backend.step(order.orderId, "delivered", deviceTime: "2026-10-20T18:41:00Z").status == 200)
        let log = try backend.store.changes(tripId: order.orderId)
        #expect(log.last?.status == "delivered")
        #expect(log.last?.deviceTime == ISO8601.parse("2026-10-20T18:41:00Z"))
        // A step that the state no longer allows is refused with the real state.
        let late = await backend.step(order.orderId, "arriving")
        #expect(late.status == 409)
        #expect((json(late.body)["trip"] as? [String: Any])?["status"] as? String == "delivered")
    }

    @Test func aLateStepAfterTheCustomerCancelledIsRefusedWithTheRealState() async throws {
        let backend = TestBackend()
        let trip = try await backend.requestRide()
        _ = await backend.assign(trip.id, to: "p1")
        let cancel = await backend.call("POST", "/v1/trips/\(trip.id)/cancel", token: backend.token("c1", .customer))
        #expect(cancel.status == 200)
        let late = await backend.step(trip.id, "driverArrived")
        #expect(late.status == 409)
        #expect((json(late.body)["trip"] as? [String: Any])?["status"] as? String == "cancelled")
    }

    /// Another account's token gets 404 on every trip and order endpoint, never a 403 that confirms the trip exists.
    @Test(arguments: [
        (nil as String?, 200), ("1", 200), ("2", 204), ("2.7", 204), ("junk", 200),
    ])
    func aReconnectToAFinishedTripThatHasItsFinalStateIs204(lastEventID: String?, status: Int) async throws {
        let backend = TestBackend()
        let ride = try await backend.requestRide("c1")
        #expect(
            await backend.call("POST", "/v1/trips/\(ride.id)/cancel", token: backend.token("c1", .customer)).status
                == 200)
        let headers = lastEventID.map { ["Last-Event-ID": $0] } ?? [:]
        let reconnect = await backend.call(
            "GET", "/v1/trips/\(ride.id)/events", token: backend.token("c1", .customer), headers: headers)
        // 204 tells an EventSource to stop; otherwise the stream sends the final state and ends.
        #expect(reconnect.status == status, "Last-Event-ID \(lastEventID ?? "none")")
    }

    @Test func anActiveTripsStreamIgnoresAnAheadLastEventID() async throws {
        let backend = TestBackend()
        let order = try await backend.placeOrder("c1")
        let r = await backend.call(
            "GET", "/v1/orders/\(order.orderId)/events", token: backend.token("c1", .customer),
            headers: ["Last-Event-ID": "99"])
        #expect(r.status == 200)
    }

    @Test(arguments: [
        ("GET", "/v1/trips/{ride}", Party.customer, nil as String?),
        ("POST", "/v1/trips/{ride}/cancel", .customer, nil),
        ("GET", "/v1/trips/{ride}/events", .customer, nil),
        ("GET", "/v1/orders/{order}/tracking", .customer, nil),
        ("GET", "/v1/orders/{order}/events", .customer, nil),
        ("POST", "/v1/orders/{order}/cancel", .customer, nil),
        ("PUT", "/v1/orders/{order}/live-activity-token", .customer, #"{"token":"00aabbccddeeff0011223344"}"#),
        (
            "POST", "/v1/provider/trips/{assigned}/steps", .provider,
            #"{"changeId":"x1","step":"driverArrived","deviceTime":"2026-10-20T18:40:00Z"}"#
        ),
        ("POST", "/v1/provider/trips/{assigned}/accept", .provider, nil),
        ("POST", "/v1/merchant/orders/{order}/accept", .merchant, #"{"preparationMinutes":5}"#),
        ("POST", "/v1/merchant/orders/{order}/ready", .merchant, nil),
        ("GET", "/v1/trips/{order}", .customer, nil),
        ("GET", "/v1/orders/{ride}/tracking", .customer, nil),
    ])
    func anotherAccountGets404(method: String, template: String, role: Party, body: String?) async throws {
        let backend = TestBackend()
        let ride = try await backend.requestRide("c1")
        let order = try await backend.placeOrder("c1")
        _ = await backend.assign(ride.id, to: "p1")
        let path = template.replacingOccurrences(of: "{ride}", with: ride.id).replacingOccurrences(
            of: "{order}", with: order.orderId
        )
        .replacingOccurrences(of: "{assigned}", with: ride.id)
        let stranger = backend.token(role == .customer ? "c2" : role == .provider ? "p2" : "m2", role)
        let before = try backend.store.trips(status: nil, limit: 10)
        let r = await backend.call(method, path, token: stranger, json: body)
        #expect(r.status == 404, "\(method) \(path) gave \(r.status)")
        #expect(try backend.store.trips(status: nil, limit: 10) == before)
        let unknown = await backend.call(
            method,
            template.replacingOccurrences(of: "{ride}", with: "NOPE").replacingOccurrences(of: "{order}", with: "NOPE")
                .replacingOccurrences(of: "{assigned}", with: "NOPE"), token: stranger, json: body)
        #expect(unknown.status == 404)
    }

    @Test(arguments: [
        (#"{"pickup": "#, 400, nil as String?),
        (
            #"{"pickup":{"lat":91,"lng":24.9},"dropoff":{"lat":60.1,"lng":24.9},"productID":"economy"}"#, 422,
            "/pickup/lat"
        ),
        (#"{"pickup":{"lat":60,"lng":24.9},"dropoff":{"lat":60.1,"lng":24.9}}"#, 422, "/productID"),
        (
            #"{"pickup":{"lat":"north","lng":24.9},"dropoff":{"lat":60.1,"lng":24.9},"productID":"economy"}"#, 422,
            "/pickup/lat"
        ),
        (
            #"{"pickup":{"lat":60,"lng":24.9},"dropoff":{"lat":60.1,"lng":24.9},"productID":"rocket"}"#, 422,
            "/productID"
        ),
    ])
    func badRideRequestsAreNamedAndChangeNothing(body: String, status: Int, pointer: String?) async throws {
        let backend = TestBackend()
        let r = await backend.call(
            "POST", "/v1/trips", token: backend.token("c1", .customer), json: body,
            headers: ["Idempotency-Key": "bad-body-key"])
        #expect(r.status == status)
        #expect(r.headers["Content-Type"] == "application/problem+json")
        if let pointer {
            #expect((json(r.body)["errors"] as? [[String: Any]])?.first?["pointer"] as? String == pointer)
        }
        #expect(try backend.store.trips(status: nil, limit: 10).isEmpty)
        // The key was not spent on a request that failed validation.
        let good = try await backend.rideBody("c1")
        #expect(
            await backend.call(
                "POST", "/v1/trips", token: backend.token("c1", .customer), json: good,
                headers: ["Idempotency-Key": "bad-body-key"]
            ).status == 201)
    }

    @Test(arguments: [
        (
            #"{"merchantId":"m1","items":[{"sku":"a","quantity":-1}],"destination":{"lat":60.1,"lng":24.9}}"#,
            "/items/0/quantity"
        ),
        (
            #"{"merchantId":"m9","items":[{"sku":"a","quantity":1}],"destination":{"lat":60.1,"lng":24.9}}"#,
            "/merchantId"
        ),
        (#"{"merchantId":"m1","items":[],"destination":{"lat":60.1,"lng":24.9}}"#, "/items"),
        (
            #"{"merchantId":"m1","items":[{"sku":"a","quantity":1}],"destination":{"lat":60.1,"lng":181}}"#,
            "/destination/lng"
        ),
        (#"{"merchantId":"m1","items":[{"sku":"a"}],"destination":{"lat":60.1,"lng":24.9}}"#, "/items/0/quantity"),
    ])
    func badOrdersAre422NamingTheField(body: String, pointer: String) async throws {
        let backend = TestBackend()
        let r = await backend.call(
            "POST", "/v1/orders", token: backend.token("c1", .customer), json: body,
            headers: ["Idempotency-Key": "bad-order-key"])
        #expect(r.status == 422)
        #expect((json(r.body)["errors"] as? [[String: Any]])?.first?["pointer"] as? String == pointer)
        #expect(try backend.store.trips(status: nil, limit: 10).isEmpty)
    }

    @Test func missingOrForgedTokensAre401AndWrongRolesAre403() async throws {
        let backend = TestBackend()
        #expect(await backend.call("GET", "/v1/trips/active", token: nil).status == 401)
        #expect(await backend.call("GET", "/v1/trips/active", token: "abc.def.ghi").status == 401)
        let other = Authenticator(secret: "another-secret-0123456789", now: { backend.clock.date })
        #expect(
            await backend.call("GET", "/v1/trips/active", token: try other.token(account: "c1", role: .customer)).status
                == 401)
        #expect(await backend.call("GET", "/v1/trips/active", token: backend.token("p1", .provider)).status == 403)
        let expiring = try backend.auth.token(account: "c1", role: .customer, lifetime: 60)
        await backend.clock.advance(by: .seconds(91))  // past exp and the 30 s leeway
        #expect(await backend.call("GET", "/v1/trips/active", token: expiring).status == 401)
    }

    @Test func trackingMatchesTheSeedShapeThroughAWholeDelivery() async throws {
        let backend = TestBackend()
        let order = try await backend.placeOrder()
        #expect(order.status == .placed)
        let merchant = backend.token("m1", .merchant), provider = backend.token("p1", .provider),
            customer = backend.token("c1", .customer)
        #expect(
            await backend.call(
                "POST", "/v1/merchant/orders/\(order.orderId)/accept", token: merchant,
                json: #"{"preparationMinutes":8}"#
            ).status == 200)
        #expect(await backend.assign(order.orderId, to: "p1").status == 200)
        #expect(await backend.call("POST", "/v1/merchant/orders/\(order.orderId)/ready", token: merchant).status == 200)
        #expect(await backend.step(order.orderId, "onTheWay").status == 200)
        let fix =
            #"{"batchId":"b1","fixes":[{"lat":60.175,"lng":24.94,"heading":90,"speed":6,"accuracy":8,"#
            + #""recordedAt":"\#(ISO8601.format(backend.clock.date))"}]}"#
        #expect(await backend.call("POST", "/v1/provider/locations", token: provider, json: fix).status == 200)
        let r = await backend.call("GET", "/v1/orders/\(order.orderId)/tracking", token: customer)
        #expect(r.status == 200)
        let keys = Set(json(r.body).keys)
        // The seed's keys, and the stops before this order's while a courier has it (0: none).
        #expect(
            keys == [
                "orderId", "version", "status", "problem", "eta", "rider", "destination", "generatedAt", "stopsBefore",
            ])
        let dto = try WireCoding.decoder().decode(TrackingDTO.self, from: Data(r.body))
        #expect(dto.status == .onTheWay)
        #expect(dto.version == 5)
        #expect(dto.rider?.firstName == "P1")
        #expect(dto.rider?.lat == 60.175)
        #expect(dto.generatedAt == backend.clock.date)
        let eta = try #require(dto.eta)
        #expect(eta.earliest < eta.latest && eta.earliest >= backend.clock.date)
        #expect(await backend.step(order.orderId, "delivered").status == 200)
        let active = await backend.call("GET", "/v1/orders/active", token: customer)
        #expect(try WireCoding.decoder().decode(ActiveOrdersDTO.self, from: Data(active.body)).orders.isEmpty)
    }

    @Test func handWrittenTrackingJSONDecodesToTheSameSnapshot() throws {
        let dto = TrackingDTO(
            orderId: "8F\"3K\\", version: 7, status: .problem, problem: "Rider\ndelayed\u{1}",
            eta: .init(
                earliest: Date(timeIntervalSince1970: 1_792_521_720),
                latest: Date(timeIntervalSince1970: 1_792_521_960.5)),
            rider: .init(
                firstName: "Ana", lat: 52.52, lng: 13.4, recordedAt: Date(timeIntervalSince1970: 1_792_521_475)),
            destination: .init(lat: 52.53, lng: 13.41), generatedAt: Date(timeIntervalSince1970: 1_792_521_480),
            stopsBefore: 1)
        let decoded = try WireCoding.decoder().decode(TrackingDTO.self, from: Data(TrackingJSON.encode(dto)))
        #expect(decoded == dto)
    }
}
