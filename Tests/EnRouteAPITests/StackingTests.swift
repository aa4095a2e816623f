import Foundation
import Testing
import EnRouteModels
import EnRouteDomain
import EnRouteAPI
import TestSupport

/// A courier carrying two orders: offered on the way, one route over both, each customer told the stops before theirs.
@Suite(.timeLimit(.minutes(1))) struct StackingTests {
    /// Beside Kamppi Kitchen (m1), where every order here is collected.
    static let atMerchant = Coordinate(lat: 60.1695, lng: 24.9376)
    static let northEast = #"{"lat":60.1841,"lng":24.9497}"#
    static let southWest = #"{"lat":60.155,"lng":24.925}"#

    func place(_ sut: ProviderBackend, _ customer: String, to destination: String = northEast) async throws -> String {
        let body = try await sut.backend.orderBody(
            customer, items: #"[{"sku":"coffee","quantity":1}]"#, destination: destination)
        let r = await sut.backend.call(
            "POST", "/v1/orders", token: sut.token(customer, .customer), json: body,
            headers: ["Idempotency-Key": UUID().uuidString])
        guard r.status == 201 else { throw Failure("place: \(String(decoding: r.body, as: UTF8.self))") }
        return try WireCoding.decoder().decode(TrackingDTO.self, from: Data(r.body)).orderId
    }

    func accept(_ sut: ProviderBackend, _ offer: Offer, by courier: String) async throws -> TripSnapshot {
        let r = await sut.call("POST", "/v1/provider/offers/\(offer.offerId)/accept", as: courier, .provider)
        guard r.status == 200 else { throw Failure("accept: \(String(decoding: r.body, as: UTF8.self))") }
        return try WireCoding.decoder().decode(TripSnapshot.self, from: Data(r.body))
    }

    func tracking(_ sut: ProviderBackend, _ order: String, _ customer: String) async throws -> TrackingDTO {
        let r = await sut.call("GET", "/v1/orders/\(order)/tracking", as: customer, .customer)
        return try WireCoding.decoder().decode(TrackingDTO.self, from: Data(r.body))
    }

    func ready(_ sut: ProviderBackend, _ order: String) async throws {
        for (path, json) in [("accept", #"{"preparationMinutes":5}"#), ("ready", nil)] {
            let r = await sut.call("POST", "/v1/merchant/orders/\(order)/\(path)", as: "m1", .merchant, json: json)
            guard r.status == 200 else { throw Failure("\(path): \(String(decoding: r.body, as: UTF8.self))") }
        }
    }

    /// Two orders from one merchant to one street, and one courier who takes both.
    func stacked() async throws -> (sut: ProviderBackend, a: String, b: String, offer: Offer) {
        let sut = try ProviderBackend()
        await sut.online("r1", at: Self.atMerchant)
        var r1 = ProviderInbox(sut.providers, "r1")
        let a = try await place(sut, "c1")
        let first = try await r1.offer()
        #expect(first.tripId == a && first.stops == nil)
        _ = try await accept(sut, first, by: "r1")
        let b = try await place(sut, "c2")
        let second = try await r1.offer()
        #expect(second.tripId == b)
        return (sut, a, b, second)
    }

    @Test func aSecondOrderOnTheCouriersWayIsOfferedToThemWithTheRouteOverBoth() async throws {
        let (sut, a, b, offer) = try await stacked()
        // Collect both, hand a over first (its customer was promised first), then b.
        let route = try #require(offer.stops).map { "\($0.tripId == a ? "a" : "b")-\($0.stop.rawValue)" }
        #expect(route == ["a-pickup", "b-pickup", "a-dropoff", "b-dropoff"])
        // The one extra stop at the merchant: its time is what the first customer waits longer.
        #expect(offer.addedSeconds == Int(StopPlanner.stopSeconds))
        let taken = try await accept(sut, offer, by: "r1")
        #expect(taken.providerId == "r1" && taken.stops == offer.stops)
        // The first order carries the same plan, and a version for it: its customer hears of the extra stop.
        #expect(try sut.trip(a)?.stops == offer.stops)
        #expect(try await tracking(sut, a, "c1").stopsBefore == 1)
        #expect(try await tracking(sut, b, "c2").stopsBefore == 2)
        #expect(sut.metrics.counter("enroute_dispatch_stacked_offers_total") == 1)
        // The courier's list shows the route on each order; the customers' and merchant's views never do.
        let active = await sut.call("GET", "/v1/provider/trips/active", as: "r1", .provider)
        let list = try WireCoding.decoder().decode(TripSnapshotList.self, from: Data(active.body))
        #expect(list.trips.count == 2 && list.trips.allSatisfy { $0.stops == offer.stops })
        let merchant = await sut.call("GET", "/v1/merchant/orders", as: "m1", .merchant)
        #expect(!String(decoding: merchant.body, as: UTF8.self).contains("stops"))
    }

    @Test func eachCustomerSeesTheStopsBeforeTheirsGoToZero() async throws {
        let (sut, a, b, offer) = try await stacked()
        _ = try await accept(sut, offer, by: "r1")
        try await ready(sut, a)
        try await ready(sut, b)
        #expect(await sut.backend.step(a, "onTheWay", provider: "r1").status == 200)
        #expect(try await tracking(sut, a, "c1").stopsBefore == 1)
        #expect(await sut.backend.step(b, "onTheWay", provider: "r1").status == 200)
        // Both collected: a is next, b has a's door before it.
        #expect(try await tracking(sut, a, "c1").stopsBefore == 0)
        #expect(try await tracking(sut, b, "c2").stopsBefore == 1)
        let before = try #require(try sut.trip(b)).version
        #expect(await sut.backend.step(a, "delivered", provider: "r1").status == 200)
        let after = try #require(try sut.trip(b))
        #expect(after.version == before + 1 && after.stops == nil)
        #expect(try await tracking(sut, b, "c2").stopsBefore == 0)
    }

    @Test func aCourierGivingUpOneOrderLeavesTheOtherAloneOnTheirRoute() async throws {
        let (sut, a, b, offer) = try await stacked()
        _ = try await accept(sut, offer, by: "r1")
        #expect(await sut.backend.step(b, "cancelled", provider: "r1").status == 200)
        #expect(try sut.trip(a)?.stops == nil)
        #expect(try sut.trip(b)?.stops == nil && sut.trip(b)?.providerId == nil)
        #expect(try await tracking(sut, a, "c1").stopsBefore == 0)
    }

    @Test func rewritingTheOtherOrdersRouteKeepsTheCouriersLatestPosition() async throws {
        let (sut, a, b, offer) = try await stacked()
        _ = try await accept(sut, offer, by: "r1")
        // A fix lives in memory between changes; the rewrite of a's route when b is given back must not lose it.
        let fix = sut.fix(Self.atMerchant, north: 30, after: 1)
        #expect(try await sut.upload("r1", batch: "b1", [fix]).status == 200)
        #expect(await sut.backend.step(b, "cancelled", provider: "r1").status == 200)
        let rewritten = try #require(try sut.trip(a))
        #expect(rewritten.stops == nil && rewritten.providerFix?.recordedAt == fix.recordedAt)
    }

    @Test func anOrderTheOtherWayGoesToACourierOfItsOwn() async throws {
        let sut = try ProviderBackend()
        await sut.online("r1", at: Self.atMerchant)
        var r1 = ProviderInbox(sut.providers, "r1")
        let a = try await place(sut, "c1")
        _ = try await accept(sut, try await r1.offer(), by: "r1")
        #expect(a.isEmpty == false)
        await sut.online("r2", at: Self.atMerchant)
        var r2 = ProviderInbox(sut.providers, "r2")
        let b = try await place(sut, "c2", to: Self.southWest)
        let offer = try await r2.offer()
        #expect(offer.tripId == b && offer.stops == nil)
        #expect(sut.providers.dispatcher.liveOffer(heldBy: "r1") == nil)
    }

    @Test func aCourierCarryingAnOrderKeepsEveryOrdersPathAndPosition() async throws {
        let (sut, a, b, offer) = try await stacked()
        _ = try await accept(sut, offer, by: "r1")
        let fix = sut.fix(Self.atMerchant, north: 30, after: 1)
        #expect(try await sut.upload("r1", batch: "b1", [fix]).status == 200)
        #expect(try sut.trip(a)?.providerFix?.recordedAt == fix.recordedAt)
        #expect(try sut.trip(b)?.providerFix?.recordedAt == fix.recordedAt)
        #expect(try await sut.paths.path(tripId: a).count == 1)
        #expect(try await sut.paths.path(tripId: b).count == 1)
    }
}
