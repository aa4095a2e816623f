import Foundation
import Testing
import EnRouteModels
import EnRouteDomain
import EnRouteBackend
import EnRouteRoads
import HTTPEngine
import TestSupport
import Synchronization

/// A ride on central Helsinki's real roads: the ETA follows the provider's fixes along a routed leg, through the HTTP
/// API.
@Suite(.timeLimit(.minutes(2))) struct RoadETATests {
    /// Where the driver starts and the rider waits: both on streets inside the shipped extract.
    static let start = Coordinate(lat: 60.1660, lng: 24.9400)
    static let pickup = Coordinate(lat: 60.1760, lng: 24.9500)
    static let dropoff = Coordinate(lat: 60.1700, lng: 24.9370)

    struct SUT {
        let test: TestBackend
        let roads: LocalRoadRouting
        var backend: Backend { test.backend }
        var estimator: RoadEstimator { test.backend.roadEstimator! }

        init() async throws {
            roads = try await TestRoads.helsinki()
            test = TestBackend(roads: roads)
        }

        func call(
            _ method: String, _ path: String, _ account: String, _ role: Party, json: String? = nil,
            key: String? = nil
        ) async -> (status: Int, body: [UInt8]) {
            let r = await test.call(
                method, path, token: test.token(account, role), json: json,
                headers: key.map { ["Idempotency-Key": $0] } ?? [:])
            return (r.status, r.body)
        }

        func ride(
            pickup: Coordinate = RoadETATests.pickup, dropoff: Coordinate = RoadETATests.dropoff
        ) async throws -> Trip {
            let body = try await test.rideBody("c1", pickup: Self.json(pickup), dropoff: Self.json(dropoff))
            let r = await call("POST", "/v1/trips", "c1", .customer, json: body, key: UUID().uuidString)
            guard r.status == 201 else {
                throw Failure("request ride: \(r.status) \(String(decoding: r.body, as: UTF8.self))")
            }
            return try WireCoding.decoder().decode(Trip.self, from: Data(r.body))
        }

        /// `coordinate` as JSON.
        static func json(_ coordinate: Coordinate) -> String { #"{"lat":\#(coordinate.lat),"lng":\#(coordinate.lng)}"# }

        /// Posts one fix at `position`, recorded now, and waits for the route work it started.
        @discardableResult
        func fix(_ position: Coordinate, heading: Double = -1, provider: String = "p1") async throws -> Int {
            let fix = LocationFix(
                lat: position.lat, lng: position.lng, heading: heading, speed: 8, accuracy: 5,
                recordedAt: test.clock.date)
            let body = String(
                decoding: try WireCoding.encoder().encode(LocationBatch(batchId: UUID().uuidString, fixes: [fix])),
                as: UTF8.self)
            let r = await call("POST", "/v1/provider/locations", provider, .provider, json: body)
            return r.status
        }

        /// The rider's view of the trip.
        func trip(_ id: String) async throws -> Trip {
            try WireCoding.decoder().decode(
                Trip.self, from: Data(await call("GET", "/v1/trips/\(id)", "c1", .customer).body))
        }

        func step(_ id: String, _ step: String) async -> Int {
            await call(
                "POST", "/v1/provider/trips/\(id)/steps", "p1", .provider,
                json: #"{"changeId":"\#(UUID().uuidString)","step":"\#(step)","deviceTime":"2026-10-20T18:40:00Z"}"#
            ).status
        }

        func advance(_ seconds: Double) async { await test.clock.advance(by: .seconds(seconds)) }
    }

    /// The point `metres` along `leg`, with the heading of the road there.
    static func along(_ leg: RoadLeg, _ metres: Double) -> (point: Coordinate, heading: Double) {
        let p = RouteProgress(leg)
        let g = leg.geometry
        var i = 0
        while i + 2 < g.count, p.cumulativeMeters[i + 1] < metres { i += 1 }
        let span = p.cumulativeMeters[i + 1] - p.cumulativeMeters[i]
        let t = span > 0 ? min(1, max(0, (metres - p.cumulativeMeters[i]) / span)) : 0
        let a = g[i], b = g[i + 1]
        let point = Coordinate(lat: a.lat + (b.lat - a.lat) * t, lng: a.lng + (b.lng - a.lng) * t)
        return (point, bearing(a, b))
    }

    static func bearing(_ a: Coordinate, _ b: Coordinate) -> Double {
        let rad = Double.pi / 180
        let y = sin((b.lng - a.lng) * rad) * cos(b.lat * rad)
        let x = cos(a.lat * rad) * sin(b.lat * rad) - sin(a.lat * rad) * cos(b.lat * rad) * cos((b.lng - a.lng) * rad)
        return (atan2(y, x) / rad + 360).truncatingRemainder(dividingBy: 360)
    }

    /// `metres` from `c` towards `bearing` degrees.
    static func offset(_ c: Coordinate, _ metres: Double, bearing: Double) -> Coordinate {
        let rad = Double.pi / 180
        return Coordinate(
            lat: c.lat + metres * cos(bearing * rad) / 111_195,
            lng: c.lng + metres * sin(bearing * rad) / (111_195 * cos(c.lat * rad)))
    }

    @Test func aRidesETAFallsAsTheCarAdvancesRisesWhenItStopsOrTurnsAwayAndReRoutesOffTheRoute() async throws {
        let sut = try await SUT()
        let leg = try sut.roads.routeNow(from: Self.start, to: Self.pickup, heading: nil)
        #expect(leg.distanceMeters > 1_000)
        let trip = try await sut.ride()
        #expect(await sut.test.assign(trip.id, to: "p1").status == 200)

        // The first fix: a straight-line window at once, the road route asked for in the background.
        let first = Self.along(leg, 0)
        #expect(try await sut.fix(first.point, heading: first.heading) == 200)
        #expect(sut.estimator.recomputeCount == 1)
        await sut.backend.settleRoads()
        let atStart = try await sut.trip(trip.id)
        let e0 = try #require(atStart.etaSeconds)
        // The route's own time, within the default band (0.85×–1.25× + 2 min), floored at a minute.
        #expect(
            Double(e0) >= leg.durationSeconds * 1.25 + 120 - 2 && Double(e0) <= leg.durationSeconds * 1.25 + 120 + 2)

        // Advancing along the route: the ETA falls, and fixes inside 30 s are projected without asking the router.
        await sut.advance(20)
        let p300 = Self.along(leg, 300)
        try await sut.fix(p300.point, heading: p300.heading)
        await sut.backend.settleRoads()
        let e1 = try #require(try await sut.trip(trip.id).etaSeconds)
        #expect(e1 < e0)
        #expect(sut.estimator.recomputeCount == 1)
        await sut.advance(15)
        let p450 = Self.along(leg, 450)
        try await sut.fix(p450.point, heading: p450.heading)
        await sut.backend.settleRoads()
        let e2 = try #require(try await sut.trip(trip.id).etaSeconds)
        #expect(e2 < e1)
        // 35 s after the first route: the throttle lets one recompute through.
        #expect(sut.estimator.recomputeCount == 2)
        let arrivalMoving = try #require(sut.test.service.cached(trip.id)?.etaLatest)

        // Stopped for a minute at the same place: the arrival time moves out by that minute.
        await sut.advance(60)
        try await sut.fix(p450.point, heading: p450.heading)
        await sut.backend.settleRoads()
        let arrivalStopped = try #require(sut.test.service.cached(trip.id)?.etaLatest)
        #expect(arrivalStopped.timeIntervalSince(arrivalMoving) >= 55)

        // Turned away, 150 m off the route: a new route at once (not waiting out the throttle), and a later ETA.
        await sut.advance(15)
        // The side of the road away from the pickup.
        let sides = [90.0, 270].map { (p450.heading + $0).truncatingRemainder(dividingBy: 360) }
        let side = sides.max {
            StraightLineEstimator.distance(Self.offset(p450.point, 150, bearing: $0), Self.pickup)
                < StraightLineEstimator.distance(Self.offset(p450.point, 150, bearing: $1), Self.pickup)
        }!
        let away = Self.offset(p450.point, 150, bearing: side)
        let before = sut.estimator.recomputeCount
        try await sut.fix(away, heading: side)
        #expect(sut.estimator.recomputeCount == before + 1)
        #expect(sut.test.metrics.counter("enroute_route_recomputes_total", labels: ["reason": "offRoute"]) == 1)
        await sut.backend.settleRoads()
        let e3 = try #require(try await sut.trip(trip.id).etaSeconds)
        #expect(e3 > e2)
        let rerouted = try sut.roads.routeNow(from: away, to: Self.pickup, heading: side)
        #expect(abs(Double(e3) - (rerouted.durationSeconds * 1.25 + 120)) <= 2)

        // Arrived: the leg is a calibration sample (predicted = the first route's time, actual = the time taken).
        #expect(await sut.step(trip.id, "driverArrived") == 200)
        await sut.backend.settleRoads()
        let samples = try sut.backend.etaSamples.recent(limit: 10)
        #expect(samples.count == 1)
        #expect(samples.first?.leg == "toPickup")
        #expect(abs((samples.first?.predictedSeconds ?? 0) - leg.durationSeconds) < 1)
        #expect(samples.first?.actualSeconds == 110)
        #expect(try await sut.trip(trip.id).etaSeconds == nil)
    }

    @Test func aRiderFacingETANeverReadsZeroOrGoesNegativeBeforeArrival() async throws {
        let sut = try await SUT()
        let trip = try await sut.ride()
        #expect(await sut.test.assign(trip.id, to: "p1").status == 200)
        try await sut.fix(Self.pickup)
        await sut.backend.settleRoads()
        // Right at the pickup the road time is a few seconds: the window opens now (the driver may be there already)
        // and its latest end is the band's 2 minutes, never less than one.
        let now = sut.test.clock.date
        let earliest = try #require(try sut.test.service.cached(trip.id)?.etaEarliest)
        #expect(earliest >= now && earliest <= now.addingTimeInterval(10))
        #expect(try await sut.trip(trip.id).etaSeconds == 120)
        // Long after the last fix, the stale window still reads a minute, not 0 or less.
        await sut.advance(600)
        #expect(try await sut.trip(trip.id).etaSeconds == 60)
    }

    @Test func fixesShownToCustomersAreSnappedOntoTheRoadWhileTheRawFixIsKept() async throws {
        let sut = try await SUT()
        let leg = try sut.roads.routeNow(from: Self.start, to: Self.pickup, heading: nil)
        let trip = try await sut.ride()
        #expect(await sut.test.assign(trip.id, to: "p1").status == 200)
        let p0 = Self.along(leg, 0)
        try await sut.fix(p0.point, heading: p0.heading)
        await sut.backend.settleRoads()
        await sut.advance(20)
        // 15 m off the road, beside it: drawn on the road, stored as measured.
        let onRoad = Self.along(leg, 200)
        let raw = Self.offset(onRoad.point, 15, bearing: onRoad.heading + 90)
        try await sut.fix(raw, heading: onRoad.heading)
        let record = try #require(try sut.test.service.cached(trip.id))
        let shown = try #require(
            WireMapping(directory: sut.backend.directory).driverLocation(record, now: sut.test.clock.date))
        #expect(StraightLineEstimator.distance(shown.coordinate, onRoad.point) < 2)
        #expect(StraightLineEstimator.distance(shown.coordinate, raw) > 13)
        let stored = try await sut.backend.paths.path(tripId: trip.id).last
        #expect(stored?.lat == raw.lat && stored?.lng == raw.lng)
        #expect(record.providerFix?.coordinate == raw)
    }

    @Test func theLiveStreamsDriverMovedCarriesTheSnappedPositionAndARecomputedETA() async throws {
        let sut = try await SUT()
        let leg = try sut.roads.routeNow(from: Self.start, to: Self.pickup, heading: nil)
        let trip = try await sut.ride()
        #expect(await sut.test.assign(trip.id, to: "p1").status == 200)
        let p0 = Self.along(leg, 0)
        var published: [TripRecord] = []
        let box = Box()
        sut.test.service.hub.onPublish { steps in box.append(steps) }
        try await sut.fix(p0.point, heading: p0.heading)
        await sut.backend.settleRoads()
        published = box.all
        // The fix itself (straight-line ETA), then the same fix again with the road ETA and a higher seq.
        #expect(published.count == 2)
        #expect(published.map { $0.providerFix?.seq ?? 0 } == [1, 2])
        #expect(published[1].etaLatest != published[0].etaLatest)
        #expect(published[1].providerFix?.snapped != nil)
    }

    /// Kaisaniemenkatu: a delivery destination on the extract's streets.
    static let destination = Coordinate(lat: 60.1715, lng: 24.9475)

    func order(_ sut: SUT) async throws -> TrackingDTO {
        let body = try await sut.test.orderBody(
            "c1", items: #"[{"sku":"coffee","quantity":1}]"#, destination: SUT.json(Self.destination))
        let r = await sut.call("POST", "/v1/orders", "c1", .customer, json: body, key: UUID().uuidString)
        guard r.status == 201 else { throw Failure("order: \(r.status) \(String(decoding: r.body, as: UTF8.self))") }
        return try WireCoding.decoder().decode(TrackingDTO.self, from: Data(r.body))
    }

    func tracking(_ sut: SUT, _ id: String) async throws -> TrackingDTO {
        try WireCoding.decoder().decode(
            TrackingDTO.self, from: Data(await sut.call("GET", "/v1/orders/\(id)/tracking", "c1", .customer).body))
    }

    @Test func aDeliveryWindowIsTheMerchantsPreparationThenTheRoadToTheCustomer() async throws {
        let sut = try await SUT()
        let merchant = try #require(sut.backend.directory.merchant(id: "m1")).position
        let main = try sut.roads.routeNow(from: merchant, to: Self.destination, heading: nil)
        let placed = try await order(sut)
        #expect(
            await sut.call(
                "POST", "/v1/merchant/orders/\(placed.orderId)/accept", "m1", .merchant,
                json: #"{"preparationMinutes":10}"#
            ).status == 200)
        await sut.backend.settleRoads()
        let now = sut.test.clock.date
        let ready = now.addingTimeInterval(600)
        let eta = try #require(try await tracking(sut, placed.orderId).eta)
        // Ready in 10 minutes, then the road from the merchant: 0.85× to 1.25× + 2 min of its time (no history yet).
        #expect(abs(eta.earliest.timeIntervalSince(ready.addingTimeInterval(0.85 * main.durationSeconds))) <= 1)
        #expect(abs(eta.latest.timeIntervalSince(ready.addingTimeInterval(1.25 * main.durationSeconds + 120))) <= 1)

        // A courier far enough that they reach the merchant after the goods are ready: their arrival decides.
        #expect(await sut.test.assign(placed.orderId, to: "p1").status == 200)
        #expect(await sut.call("POST", "/v1/merchant/orders/\(placed.orderId)/ready", "m1", .merchant).status == 200)
        let far = Coordinate(lat: 60.17848, lng: 24.94750)
        try await sut.fix(far)
        await sut.backend.settleRoads()
        let approach = try sut.roads.routeNow(from: far, to: merchant, heading: nil)
        let later = try #require(try await tracking(sut, placed.orderId).eta)
        let at = sut.test.clock.date
        #expect(
            abs(
                later.earliest.timeIntervalSince(
                    at.addingTimeInterval(0.85 * approach.durationSeconds + 0.85 * main.durationSeconds))) <= 1)
        #expect(
            abs(
                later.latest.timeIntervalSince(
                    at.addingTimeInterval(1.25 * approach.durationSeconds + 1.25 * main.durationSeconds + 120))) <= 1)
    }

    @Test func theTrackedRiderIsDrawnOnTheRoadShePosts() async throws {
        let sut = try await SUT()
        let placed = try await order(sut)
        #expect(
            await sut.call(
                "POST", "/v1/merchant/orders/\(placed.orderId)/accept", "m1", .merchant,
                json: #"{"preparationMinutes":5}"#
            ).status == 200)
        #expect(await sut.test.assign(placed.orderId, to: "p1").status == 200)
        #expect(await sut.call("POST", "/v1/merchant/orders/\(placed.orderId)/ready", "m1", .merchant).status == 200)
        #expect(await sut.step(placed.orderId, "onTheWay") == 200)
        let merchant = try #require(sut.backend.directory.merchant(id: "m1")).position
        let leg = try sut.roads.routeNow(from: merchant, to: Self.destination, heading: nil)
        let p0 = Self.along(leg, 0)
        try await sut.fix(p0.point, heading: p0.heading)
        await sut.backend.settleRoads()
        await sut.advance(15)
        let p = Self.along(leg, 120)
        let raw = Self.offset(p.point, 12, bearing: (p.heading + 90).truncatingRemainder(dividingBy: 360))
        try await sut.fix(raw, heading: p.heading)
        let rider = try #require(try await tracking(sut, placed.orderId).rider)
        let shown = Coordinate(lat: rider.lat, lng: rider.lng)
        #expect(StraightLineEstimator.distance(shown, p.point) < 2)
        #expect(
            try await sut.backend.paths.path(tripId: placed.orderId).last.map { Coordinate(lat: $0.lat, lng: $0.lng) }
                == raw)
    }

    @Test func requestsWhosePickupOrDropoffIsNotNearARoadGetA422NamingTheField() async throws {
        let sut = try await SUT()
        // The harbour, 1 km out from the extract's roads.
        let sea = Coordinate(lat: 60.1500, lng: 24.9600)
        // A ride is quoted before it is requested: the quote is where the sea is refused.
        let ride = await sut.call(
            "POST", "/v1/estimates", "c1", .customer,
            json: #"{"pickup":\#(SUT.json(sea)),"dropoff":\#(SUT.json(Self.dropoff))}"#)
        #expect(ride.status == 422)
        #expect(json(ride.body)["detail"] as? String == "/pickup: is not near a road the service covers")
        // Nor can a quote from the shore be taken out to sea.
        let shore = try await sut.test.rideBody("c1", pickup: SUT.json(Self.pickup), dropoff: SUT.json(Self.dropoff))
        let moved = shore.replacingOccurrences(of: SUT.json(Self.pickup), with: SUT.json(sea))
        #expect(moved != shore)
        let request = await sut.call("POST", "/v1/trips", "c1", .customer, json: moved, key: UUID().uuidString)
        #expect(request.status == 422)
        #expect((json(request.body)["errors"] as? [[String: Any]])?.first?["pointer"] as? String == "/pickup")
        #expect(try sut.test.store.activeTrips().isEmpty)
        let drop = await sut.call(
            "POST", "/v1/estimates", "c1", .customer,
            json:
                #"{"pickup":{"lat":\#(Self.pickup.lat),"lng":\#(Self.pickup.lng)},"dropoff":{"lat":\#(sea.lat),"#
                + #""lng":\#(sea.lng)}}"#
        )
        #expect(drop.status == 422)
        #expect(json(drop.body)["detail"] as? String == "/dropoff: is not near a road the service covers")
        // A basket to the sea has no quote, and an order there is refused on its destination before its (missing)
        // quote.
        let basket =
            #"{"merchantId":"m1","items":[{"sku":"coffee","quantity":1}],"destination":{"lat":\#(sea.lat),"#
            + #""lng":\#(sea.lng)}}"#
        let quote = await sut.call("POST", "/v1/orders/quote", "c1", .customer, json: basket)
        #expect(quote.status == 422)
        #expect(json(quote.body)["detail"] as? String == "/destination: is not near a road the service covers")
        let order = await sut.call("POST", "/v1/orders", "c1", .customer, json: basket, key: UUID().uuidString)
        #expect(order.status == 422)
        #expect(json(order.body)["detail"] as? String == "/destination: is not near a road the service covers")
    }

    @Test func estimatesPriceTheRoadDistanceAndDurationAndWaitForTheNearestProvidersRoadTime() async throws {
        let sut = try await SUT()
        let body =
            #"{"pickup":{"lat":\#(Self.pickup.lat),"lng":\#(Self.pickup.lng)},"dropoff":{"lat":\#(Self.dropoff.lat),"#
            + #""lng":\#(Self.dropoff.lng)}}"#
        let leg = try sut.roads.routeNow(from: Self.pickup, to: Self.dropoff, heading: nil)
        let none = await sut.call("POST", "/v1/estimates", "c1", .customer, json: body)
        #expect(none.status == 200)
        let idle = try WireCoding.decoder().decode([Estimate].self, from: Data(none.body))
        // Each product quoted under the price list on the road leg, with the straight-line estimator's waits (none
        // online).
        let waits = StraightLineEstimator.fares(
            km: leg.distanceMeters / 1000, minutes: leg.durationSeconds / 60, pickupWait: 300, currency: "EUR")
        let expected = try waits.map { estimate in
            try #require(
                Pricing.ride(
                    product: estimate.productID, distanceMeters: leg.distanceMeters,
                    durationSeconds: leg.durationSeconds,
                    demand: 1, rules: PricingRules()))
        }
        #expect(idle.map(\.productID) == waits.map(\.productID) && idle.map(\.etaSeconds) == waits.map(\.etaSeconds))
        #expect(idle.map(\.fare) == expected.map(\.total))
        // The quotes record the road leg they were priced on.
        for (estimate, price) in zip(idle, expected) {
            let id = try #require(estimate.quoteId)
            let quote = try #require(try await sut.backend.payments.quotes.store.quote(id: id))
            #expect(quote.distanceMeters == leg.distanceMeters && quote.durationSeconds == leg.durationSeconds)
            #expect(quote.price == price)
        }
        // A provider online near the pickup: the wait is their road time to it.
        #expect(
            await sut.call(
                "POST", "/v1/provider/availability", "p1", .provider,
                json: #"{"online":true,"position":{"lat":\#(Self.start.lat),"lng":\#(Self.start.lng)}}"#
            ).status == 200)
        let withCar = try WireCoding.decoder().decode(
            [Estimate].self, from: Data(await sut.call("POST", "/v1/estimates", "c1", .customer, json: body).body))
        let approach = try #require(try sut.roads.tableNow(sources: [Self.start], destinations: [Self.pickup])[0][0])
        #expect(withCar.first?.etaSeconds == Int(approach.durationSeconds.rounded(.up)))
        #expect(withCar.first?.fare == expected.first?.total)
    }

    @Test func atCompletionTheKeptPathIsMatchedOntoTheRoadsAndKeptOnTheTrip() async throws {
        let sut = try await SUT()
        let leg = try sut.roads.routeNow(from: Self.pickup, to: Self.dropoff, heading: nil)
        let trip = try await sut.ride()
        #expect(await sut.test.assign(trip.id, to: "p1").status == 200)
        #expect(await sut.step(trip.id, "driverArrived") == 200)
        #expect(await sut.step(trip.id, "onTrip") == 200)
        // Noisy fixes every 50 m along the leg (±6 m across the road).
        var metres = 0.0, k = 0
        while metres <= leg.distanceMeters {
            let p = Self.along(leg, metres)
            try await sut.fix(Self.offset(p.point, k % 2 == 0 ? 6 : -6, bearing: p.heading + 90), heading: p.heading)
            await sut.advance(6)
            metres += 50; k += 1
        }
        try await sut.fix(leg.end.location)
        #expect(await sut.step(trip.id, "completed") == 200)
        await sut.backend.settleRoads()
        let done = try #require(try sut.test.service.cached(trip.id))
        let matched = try #require(done.matchedDistanceMeters)
        #expect(
            abs(matched - leg.distanceMeters) / leg.distanceMeters < 0.03,
            "matched \(matched) m, route \(leg.distanceMeters) m")
        #expect((done.matchedDurationSeconds ?? 0) > 0)
        let ops = await sut.call("GET", "/v1/ops/trips/\(trip.id)", "ops", .ops)
        #expect(ops.status == 200)
        #expect(
            (json(ops.body)["trip"] as? [String: Any])?["matchedDistanceMeters"] as? Double == matched,
            "ops sees it on the trip's detail")
    }
}

/// Records published steps for a test to read.
final class Box: Sendable {
    private let steps = Mutex<[TripRecord]>([])
    func append(_ s: [TripRecord]) { steps.withLock { $0 += s } }
    var all: [TripRecord] { steps.withLock { $0 } }
}

/// Live streams of an order: a window that a new road route moves reaches watchers without a version or a fix.
@Suite(.timeLimit(.minutes(2))) struct RoadETAStreamTests {
    @Test func anOrdersWatchersGetTheRoadWindowWhenItsRouteArrives() async throws {
        let gate = GatedRoads(base: try await TestRoads.helsinki())
        let test = TestBackend(roads: gate)
        let destination = RoadETATests.destination
        let body = try await test.orderBody(
            "c1", items: #"[{"sku":"coffee","quantity":1}]"#, destination: RoadETATests.SUT.json(destination))
        let placed = await test.call(
            "POST", "/v1/orders", token: test.token("c1", .customer), json: body,
            headers: ["Idempotency-Key": UUID().uuidString])
        #expect(placed.status == 201)
        let order = try WireCoding.decoder().decode(TrackingDTO.self, from: Data(placed.body))
        let (http, server) = test.client("c1", .customer)
        let request = await server.request(
            "GET", "/v1/orders/\(order.orderId)/events", headers: ["Accept": "text/event-stream"])
        var events = http.events(request).makeAsyncIterator()
        // The route is held back: the stream opens on the straight-line window.
        let first = try #require(try await events.next())
        let opening = try WireCoding.decoder().decode(TrackingDTO.self, from: Data(first.data.utf8))
        #expect(opening.eta == order.eta)
        gate.open()
        await test.backend.settleRoads()
        let second = try #require(try await events.next())
        #expect(second.event == "tracking")
        let moved = try WireCoding.decoder().decode(TrackingDTO.self, from: Data(second.data.utf8))
        #expect(moved.version == order.version)
        let record = try #require(try test.service.cached(order.orderId))
        #expect(moved.eta?.latest == record.etaLatest)
        #expect(moved.eta != opening.eta)
    }
}

/// Routes that wait until the test opens the gate; summaries (a quote's price), tables and snapping answer at once.
final class GatedRoads: RoadRouting {
    let base: LocalRoadRouting
    private let state = Mutex<(open: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))
    init(base: LocalRoadRouting) { self.base = base }

    func open() {
        let waiters = state.withLock { s in
            s.open = true
            defer { s.waiters = [] }
            return s.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    func route(
        from: Coordinate, to: Coordinate, heading: Double?, departure: Date
    ) async throws(RoadRoutingError) -> RoadLeg {
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            let go = state.withLock { s in
                if s.open { return true }
                s.waiters.append(c)
                return false
            }
            if go { c.resume() }
        }
        return try base.routeNow(from: from, to: to, heading: heading)
    }

    func routeSummary(
        from: Coordinate, to: Coordinate, heading: Double?, departure: Date
    ) async throws(RoadRoutingError) -> RoadLeg {
        try base.routeSummaryNow(from: from, to: to, heading: heading)
    }

    func table(
        sources: [Coordinate], destinations: [Coordinate], departure: Date
    ) async throws(RoadRoutingError) -> [[RoadCost?]] {
        try base.tableNow(sources: sources, destinations: destinations)
    }

    func nearest(_ coordinate: Coordinate, heading: Double?) async throws(RoadRoutingError) -> RoadWaypoint {
        try base.nearestNow(coordinate, heading: heading)
    }
}

/// The seam's own matcher, for engines without one (an external OSRM): routes between placed fixes, summed.
@Suite(.timeLimit(.minutes(2))) struct DefaultMatchTests {
    @Test func aNoisyTrackMatchesWithinThreePercentOfItsRoadLength() async throws {
        let local = try await TestRoads.helsinki()
        let roads = GatedRoads(base: local)
        roads.open()
        let leg = try local.routeNow(from: RoadETATests.pickup, to: RoadETATests.dropoff, heading: nil)
        var fixes: [RoadFix] = []
        var metres = 0.0, k = 0
        let t0 = Date(timeIntervalSince1970: 1_792_520_000)
        while metres <= leg.distanceMeters {
            let p = RoadETATests.along(leg, metres)
            // ±6 m across the road, alternately: enough to put a fix on the other carriageway.
            fixes.append(
                RoadFix(
                    coordinate: RoadETATests.offset(p.point, k % 2 == 0 ? 6 : -6, bearing: p.heading + 90),
                    heading: p.heading,
                    recordedAt: t0.addingTimeInterval(Double(k) * 6)))
            metres += 50; k += 1
        }
        fixes.append(
            RoadFix(coordinate: leg.end.location, heading: nil, recordedAt: t0.addingTimeInterval(Double(k) * 6)))
        let matched = try await roads.match(fixes)
        #expect(
            abs(matched.distanceMeters - leg.distanceMeters) / leg.distanceMeters < 0.03,
            "matched \(matched.distanceMeters) m of \(leg.distanceMeters) m")
        #expect(matched.matchedFixes >= fixes.count - 6)
        // Nothing near a road: no path.
        await #expect(throws: RoadRoutingError.noSegment(index: 0)) {
            try await roads.match([
                RoadFix(coordinate: Coordinate(lat: 60.15, lng: 24.96), heading: nil, recordedAt: t0),
                RoadFix(
                    coordinate: Coordinate(lat: 60.151, lng: 24.96), heading: nil, recordedAt: t0.addingTimeInterval(60)
                ),
            ])
        }
    }
}
