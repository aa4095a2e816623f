import Foundation
import Testing
import EnRouteModels
import EnRouteDomain
import TestSupport

/// Guidance on central Helsinki's real roads: the provider's route to the next stop, and the customer's map line.
@Suite(.timeLimit(.minutes(2))) struct GuidanceAPITests {
    /// Kamppi (Fredrikinkatu) to Kluuvi (Aleksanterinkatu), both inside the shipped extract.
    static let pickup = Coordinate(lat: 60.1670, lng: 24.9365)
    static let dropoff = Coordinate(lat: 60.1690, lng: 24.9490)
    /// Where the provider is when assigned: north of the pickup, near Kaivokatu.
    static let start = Coordinate(lat: 60.1705, lng: 24.9420)

    struct SUT {
        let backend: TestBackend
        let ride: Trip
        var clock: ManualClock { backend.clock }

        func get(_ path: String, as account: String, _ role: Party) async -> (status: Int, body: [UInt8]) {
            let r = await backend.call("GET", path, token: backend.token(account, role))
            return (r.status, r.body)
        }

        func providerRoute(_ query: String = "", as provider: String = "p1") async throws -> ProviderRoute {
            let r = await get(APIPath.providerTripRoute(ride.id) + query, as: provider, .provider)
            guard r.status == 200 else {
                throw Failure("provider route: \(r.status) \(String(decoding: r.body, as: UTF8.self))")
            }
            return try WireCoding.decoder().decode(ProviderRoute.self, from: Data(r.body))
        }

        /// Uploads one fix at `point`, recorded now, moving at `speed` towards `heading`.
        func fix(
            _ point: Coordinate, heading: Double = 0, speed: Double = 8, batch: String = UUID().uuidString
        ) async throws {
            let fix = LocationFix(
                lat: point.lat, lng: point.lng, heading: heading, speed: speed, accuracy: 5, recordedAt: clock.date)
            let body = String(
                decoding: try WireCoding.encoder().encode(LocationBatch(batchId: batch, fixes: [fix])), as: UTF8.self)
            let r = await backend.call(
                "POST", APIPath.providerLocations, token: backend.token("p1", .provider), json: body)
            let result = try WireCoding.decoder().decode(LocationBatchResult.self, from: Data(r.body))
            guard r.status == 200, result.accepted == 1 else { throw Failure("fix not kept: \(r.status) \(result)") }
        }

        func step(_ step: String) async throws {
            let r = await backend.call(
                "POST", APIPath.providerTripSteps(ride.id), token: backend.token("p1", .provider),
                json: #"{"changeId":"\#(UUID().uuidString)","step":"\#(step)","deviceTime":"2026-10-20T18:40:00Z"}"#)
            guard r.status == 200 else {
                throw Failure("step \(step): \(r.status) \(String(decoding: r.body, as: UTF8.self))")
            }
        }
    }

    /// A ride from `pickup` to `dropoff` on a backend routing on central Helsinki, assigned to p1 unless told not to.
    func makeSUT(assign: Bool = true, roads: Bool = true) async throws -> SUT {
        let helsinki = try await TestRoads.helsinki()
        let backend = TestBackend(roads: roads ? helsinki : nil)
        let body = try await backend.rideBody(
            "c1", pickup: #"{"lat":\#(Self.pickup.lat),"lng":\#(Self.pickup.lng)}"#,
            dropoff: #"{"lat":\#(Self.dropoff.lat),"lng":\#(Self.dropoff.lng)}"#)
        let r = await backend.call(
            "POST", APIPath.trips, token: backend.token("c1", .customer), json: body,
            headers: ["Idempotency-Key": UUID().uuidString])
        guard r.status == 201 else {
            throw Failure("request ride: \(r.status) \(String(decoding: r.body, as: UTF8.self))")
        }
        let ride = try WireCoding.decoder().decode(Trip.self, from: Data(r.body))
        if assign { #expect(await backend.assign(ride.id, to: "p1").status == 200) }
        return SUT(backend: backend, ride: ride)
    }

    @Test func theProvidersRouteLeadsFromTheirFixToThePickupWithSteps() async throws {
        let sut = try await makeSUT()
        try await sut.fix(Self.start, heading: 180)
        let route = try await sut.providerRoute()
        #expect(route.tripId == sut.ride.id)
        #expect(route.stop == .pickup)
        #expect(route.from == Self.start)
        #expect(route.to == Self.pickup)
        #expect(route.steps.first?.type == "depart")
        #expect(route.steps.last?.type == "arrive")
        #expect(route.steps.count >= 3, "a route across blocks has turns: \(route.steps.map(\.type))")
        #expect(route.distanceMeters > 300 && route.distanceMeters < 2500)
        #expect(route.durationSeconds > 0)
        #expect(route.computedAt == sut.clock.date)
        let line = route.geometry
        #expect(line.count >= 3)
        #expect(try #require(line.first).distance(to: Self.start) < 60, "the line starts at the provider")
        #expect(try #require(line.last).distance(to: Self.pickup) < 60, "the line ends at the pickup")
    }

    @Test func afterPickupTheRouteLeadsToTheDropoff() async throws {
        let sut = try await makeSUT()
        try await sut.fix(Self.start, heading: 180)
        try await sut.step("driverArrived")
        await sut.clock.advance(by: .seconds(30))
        try await sut.fix(Self.pickup, speed: 0)
        try await sut.step("onTrip")
        let route = try await sut.providerRoute()
        #expect(route.stop == .dropoff)
        #expect(route.from == Self.pickup)
        #expect(route.to == Self.dropoff)
        #expect(try #require(route.geometry.last).distance(to: Self.dropoff) < 60)
        #expect(route.steps.contains { $0.type == "arrive" })
    }

    @Test func theRouteIsOnlyForTheTripsOwnProvider() async throws {
        let sut = try await makeSUT()
        try await sut.fix(Self.start)
        #expect(await sut.get(APIPath.providerTripRoute(sut.ride.id), as: "p2", .provider).status == 404)
        #expect(await sut.get(APIPath.providerTripRoute("T-none"), as: "p1", .provider).status == 404)
        #expect(await sut.get(APIPath.providerTripRoute(sut.ride.id), as: "c1", .customer).status == 403)
    }

    /// A fix far from the previous route re-plans: the next route starts from the new position.
    @Test func aFixOffTheRouteReplansFromTheNewPosition() async throws {
        let sut = try await makeSUT()
        try await sut.fix(Self.start, heading: 180)
        let first = try await sut.providerRoute()
        let off = Coordinate(lat: 60.1680, lng: 24.9460)  // Esplanadi, east of the route to Kamppi
        let offDistance = Self.distance(from: off, toLine: first.geometry)
        #expect(offDistance > 100, "the test's detour must be off the first route (\(Int(offDistance)) m)")
        await sut.clock.advance(by: .seconds(60))
        try await sut.fix(off, heading: 270)
        let second = try await sut.providerRoute()
        #expect(second.from == off)
        #expect(try #require(second.geometry.first).distance(to: off) < 60)
        #expect(second.polyline != first.polyline)
        #expect(second.computedAt > first.computedAt)
    }

    @Test func aGivenPositionIsUsedWhenNoFixIsKnownYet() async throws {
        let sut = try await makeSUT()
        let missing = await sut.get(APIPath.providerTripRoute(sut.ride.id), as: "p1", .provider)
        #expect(missing.status == 422)
        #expect(
            json(missing.body)["detail"] as? String ?? ""
                == "/from: no position of yours is known on this trip yet; send one (?from=lat,lng) or upload "
                + "a fix first"
        )
        let route = try await sut.providerRoute("?from=\(Self.start.lat),\(Self.start.lng)&heading=180")
        #expect(route.from == Self.start)
        #expect(route.stop == .pickup)
        #expect(
            await sut.get(APIPath.providerTripRoute(sut.ride.id) + "?from=91,24.9", as: "p1", .provider).status == 422)
        #expect(
            await sut.get(
                APIPath.providerTripRoute(sut.ride.id) + "?from=60.17,24.94&heading=east", as: "p1", .provider
            ).status == 422)
    }

    @Test func aPositionFarFromAnyRoadIs422NoSegment() async throws {
        let sut = try await makeSUT()
        let r = await sut.get(APIPath.providerTripRoute(sut.ride.id) + "?from=60.30,25.20", as: "p1", .provider)
        #expect(r.status == 422)
        #expect(json(r.body)["type"] as? String == "https://enroute.invalid/problems/no-segment")
    }

    @Test func anEndedTripHasNoRouteLeft() async throws {
        let sut = try await makeSUT()
        try await sut.fix(Self.start)
        #expect(
            await sut.backend.call("POST", APIPath.tripCancel(sut.ride.id), token: sut.backend.token("c1", .customer))
                .status == 200)
        let provider = await sut.get(APIPath.providerTripRoute(sut.ride.id), as: "p1", .provider)
        let customer = await sut.get(APIPath.tripRoute(sut.ride.id), as: "c1", .customer)
        #expect(provider.status == 409 && customer.status == 409)
        #expect(json(provider.body)["type"] as? String == "https://enroute.invalid/problems/trip-ended")
    }

    @Test func withoutARoadNetworkRoutesAre503Problems() async throws {
        let sut = try await makeSUT(roads: false)
        try await sut.fix(Self.start)
        for path in [APIPath.providerTripRoute(sut.ride.id), APIPath.tripRoute(sut.ride.id)] {
            let r = await sut.backend.call(
                "GET", path,
                token: sut.backend.token(
                    path.contains("provider") ? "p1" : "c1", path.contains("provider") ? .provider : .customer))
            #expect(r.status == 503)
            #expect(r.headers["Content-Type"] == "application/problem+json")
            #expect(r.headers["Retry-After"] == "60")
            #expect(json(r.body)["type"] as? String == "https://enroute.invalid/problems/no-road-network")
        }
    }

    // MARK: - The customer's map line

    @Test func theCustomersRouteRunsFromTheProviderThroughThePickupToTheDropoff() async throws {
        let sut = try await makeSUT()
        try await sut.fix(Self.start, heading: 180)
        let r = await sut.get(APIPath.tripRoute(sut.ride.id), as: "c1", .customer)
        #expect(r.status == 200)
        let line = try WireCoding.decoder().decode([Coordinate].self, from: Data(r.body))
        #expect(line.count >= 4)
        #expect(try #require(line.first).distance(to: Self.start) < 60, "the line starts near the provider")
        #expect(try #require(line.last).distance(to: Self.dropoff) < 60)
        #expect(line.contains { $0.distance(to: Self.pickup) < 60 }, "the line passes the pickup")
        // The array is the ride tracking screen's routeData: exactly [{lat, lng}].
        let raw = try #require(try JSONSerialization.jsonObject(with: Data(r.body)) as? [[String: Any]])
        #expect(Set(raw[0].keys) == ["lat", "lng"])
    }

    @Test func beforeAssignmentTheCustomersRouteIsPickupToDropoff() async throws {
        let sut = try await makeSUT(assign: false)
        let r = await sut.get(APIPath.tripRoute(sut.ride.id), as: "c1", .customer)
        #expect(r.status == 200)
        let line = try WireCoding.decoder().decode([Coordinate].self, from: Data(r.body))
        #expect(try #require(line.first).distance(to: Self.pickup) < 60)
        #expect(try #require(line.last).distance(to: Self.dropoff) < 60)
    }

    @Test func theCustomersRouteIsOnlyForTheTripsParties() async throws {
        let sut = try await makeSUT()
        try await sut.fix(Self.start)
        #expect(await sut.get(APIPath.tripRoute(sut.ride.id), as: "c2", .customer).status == 404)
        #expect(await sut.get(APIPath.tripRoute(sut.ride.id), as: "p2", .provider).status == 404)
        #expect(await sut.get(APIPath.tripRoute(sut.ride.id), as: "p1", .provider).status == 200)
        #expect(await sut.get(APIPath.tripRoute(sut.ride.id), as: "ops", .ops).status == 200)
        // Rides and orders never answer for each other.
        #expect(await sut.get(APIPath.orderRoute(sut.ride.id), as: "c1", .customer).status == 404)
    }

    /// A fix off the roads (a car park) does not blank the customer's map: the line falls back to pickup → drop-off.
    @Test func aProviderFixOffTheRoadsFallsBackToThePickup() async throws {
        let sut = try await makeSUT()
        try await sut.fix(Coordinate(lat: 60.1720, lng: 24.9900))  // out of the extract: no road near
        let r = await sut.get(APIPath.tripRoute(sut.ride.id), as: "c1", .customer)
        #expect(r.status == 200)
        let line = try WireCoding.decoder().decode([Coordinate].self, from: Data(r.body))
        #expect(try #require(line.first).distance(to: Self.pickup) < 60)
    }

    // MARK: - Deliveries

    /// A delivery leads to the merchant first (its pickup), and the order's map line runs through the merchant.
    @Test func aDeliveryLeadsToTheMerchantAndItsMapLineRunsThroughIt() async throws {
        let week = OpeningHours.days.map { OpeningHours(day: $0, opens: "00:00", closes: "23:59") }
        let kitchen = Merchant(
            id: "m9", name: "Kamppi Kitchen", position: Self.pickup, openingHours: week,
            catalogue: [
                CatalogueItem(sku: "coffee", name: "Filter coffee", price: Money(amountMinor: 350, currency: "EUR"))
            ])
        let backend = TestBackend(
            directory: StaticDirectory(merchants: [kitchen]), roads: try await TestRoads.helsinki())
        let body = try await backend.orderBody(
            "c1", merchantId: "m9", items: #"[{"sku":"coffee","quantity":1}]"#,
            destination: #"{"lat":\#(Self.dropoff.lat),"lng":\#(Self.dropoff.lng)}"#)
        let placed = await backend.call(
            "POST", APIPath.orders, token: backend.token("c1", .customer), json: body,
            headers: ["Idempotency-Key": UUID().uuidString])
        #expect(placed.status == 201, "\(String(decoding: placed.body, as: UTF8.self))")
        let order = try WireCoding.decoder().decode(TrackingDTO.self, from: Data(placed.body))
        #expect(await backend.assign(order.orderId, to: "p1").status == 200)
        let batch =
            #"{"batchId":"b1","fixes":[{"lat":\#(Self.start.lat),"lng":\#(Self.start.lng),"heading":180,"speed":8,"#
            + #""accuracy":5,"recordedAt":"\#(ISO8601.format(backend.clock.date))"}]}"#
        #expect(
            await backend.call("POST", APIPath.providerLocations, token: backend.token("p1", .provider), json: batch)
                .status == 200)

        let r = await backend.call(
            "GET", APIPath.providerTripRoute(order.orderId), token: backend.token("p1", .provider))
        #expect(r.status == 200, "\(String(decoding: r.body, as: UTF8.self))")
        let route = try WireCoding.decoder().decode(ProviderRoute.self, from: Data(r.body))
        #expect(route.stop == .pickup && route.to == kitchen.position)

        let map = await backend.call("GET", APIPath.orderRoute(order.orderId), token: backend.token("c1", .customer))
        #expect(map.status == 200)
        let line = try WireCoding.decoder().decode([Coordinate].self, from: Data(map.body))
        #expect(try #require(line.first).distance(to: Self.start) < 60)
        #expect(line.contains { $0.distance(to: kitchen.position) < 60 }, "the line passes the merchant")
        #expect(try #require(line.last).distance(to: Self.dropoff) < 60)
        #expect(
            await backend.call("GET", APIPath.tripRoute(order.orderId), token: backend.token("c1", .customer)).status
                == 404)
    }

    /// The shortest distance in metres from `point` to the polyline `line` (flat-earth, fine at city scale).
    static func distance(from point: Coordinate, toLine line: [Coordinate]) -> Double {
        let k = cos(point.lat * .pi / 180)
        func xy(_ c: Coordinate) -> (Double, Double) {
            ((c.lng - point.lng) * 111_320 * k, (c.lat - point.lat) * 110_540)
        }
        var best = Double.infinity
        for (a, b) in zip(line, line.dropFirst()) {
            let (ax, ay) = xy(a), (bx, by) = xy(b)
            let dx = bx - ax, dy = by - ay, len = dx * dx + dy * dy
            let t = len > 0 ? max(0, min(1, -(ax * dx + ay * dy) / len)) : 0
            best = min(best, hypot(ax + t * dx, ay + t * dy))
        }
        return best
    }
}

extension Coordinate {
    /// Metres to `other` (equirectangular; fine at city scale).
    func distance(to other: Coordinate) -> Double {
        let k = cos((lat + other.lat) / 2 * .pi / 180)
        return hypot((other.lng - lng) * 111_320 * k, (other.lat - lat) * 110_540)
    }
}
