import Foundation
import Testing
import EnRouteModels
import EnRouteDomain
import TestSupport

/// Batched matching: a city's requests gathered over a window and matched together, on a manual clock.
@Suite(.timeLimit(.minutes(1))) struct BatchedDispatchTests {
    func makeSUT(_ matching: DispatchMatching = .batched) throws -> ProviderBackend {
        var policy = DispatchPolicy()
        policy.matching = matching
        policy.batchWindow = .seconds(2)
        return try ProviderBackend(policy: policy)
    }

    /// A ride from `metres` north of the standard pickup.
    func requestRide(_ sut: ProviderBackend, _ customer: String, north metres: Double) async throws -> Trip {
        let at = ProviderBackend.north(metres)
        let body = try await sut.backend.rideBody(
            customer, pickup: #"{"lat":\#(at.lat),"lng":\#(at.lng)}"#, dropoff: TestBackend.dropoff)
        let r = await sut.backend.call(
            "POST", "/v1/trips", token: sut.token(customer, .customer), json: body,
            headers: ["Idempotency-Key": UUID().uuidString])
        guard r.status == 201 else { throw Failure("request ride: \(r.status)") }
        return try WireCoding.decoder().decode(Trip.self, from: Data(r.body))
    }

    /// Two riders 300 m apart and two providers: p1 between them, p2 400 m behind the first rider. Offered one at a
    /// time, the first rider takes p1 and the second waits for p2 (100 + 700 m); matched together, the first gets p2
    /// and the second p1 (400 + 200 m).
    func twoRidersTwoProviders(_ sut: ProviderBackend) async throws -> (first: Trip, second: Trip) {
        await sut.online("p1", at: ProviderBackend.north(100))
        await sut.online("p2", at: ProviderBackend.north(-400))
        let first = try await requestRide(sut, "c1", north: 0)
        let second = try await requestRide(sut, "c2", north: 300)
        return (first, second)
    }

    @Test func requestsInOneWindowGetTheAssignmentOfLeastTotalPickupTime() async throws {
        let sut = try makeSUT()
        var p1 = ProviderInbox(sut.providers, "p1"), p2 = ProviderInbox(sut.providers, "p2")
        let (first, second) = try await twoRidersTwoProviders(sut)
        await sut.providers.dispatcher.looksWaiting(atLeast: 2)
        await sut.clock.advance(by: .seconds(2))
        #expect(try await p1.offer().tripId == second.id)
        #expect(try await p2.offer().tripId == first.id)
    }

    @Test func greedyMatchingOffersEachRequestItsOwnNearest() async throws {
        let sut = try makeSUT(.greedy)
        var p1 = ProviderInbox(sut.providers, "p1"), p2 = ProviderInbox(sut.providers, "p2")
        await sut.online("p1", at: ProviderBackend.north(100))
        await sut.online("p2", at: ProviderBackend.north(-400))
        // One after the other, as greedy serves them: two searches begun together look in either order.
        let first = try await requestRide(sut, "c1", north: 0)
        #expect(try await p1.offer().tripId == first.id)
        let second = try await requestRide(sut, "c2", north: 300)
        #expect(try await p2.offer().tripId == second.id)
        #expect(sut.providers.dispatcher.looksWaiting == 0)
    }

    @Test func noOfferGoesOutBeforeTheWindowClosesAndNoneWaitsLonger() async throws {
        let sut = try makeSUT()
        await sut.online("p1", at: ProviderBackend.north(100))
        var p1 = ProviderInbox(sut.providers, "p1")
        let trip = try await sut.requestRide()
        await sut.providers.dispatcher.looksWaiting(atLeast: 1)
        await sut.clock.advance(by: .milliseconds(1_999))
        #expect(sut.providers.dispatcher.liveOffer(forTrip: trip.id) == nil)
        #expect(sut.providers.dispatcher.looksWaiting == 1)
        await sut.clock.advance(by: .milliseconds(1))
        let offer = try await p1.offer()
        #expect(offer.tripId == trip.id)
        #expect(offer.expiresAt == sut.clock.date.addingTimeInterval(15))
    }

    @Test func aDeclinedRequestJoinsTheNextWindow() async throws {
        let sut = try makeSUT()
        await sut.online("p1", at: ProviderBackend.north(100))
        await sut.online("p2", at: ProviderBackend.north(200))
        var p1 = ProviderInbox(sut.providers, "p1"), p2 = ProviderInbox(sut.providers, "p2")
        let trip = try await sut.requestRide()
        await sut.providers.dispatcher.looksWaiting(atLeast: 1)
        await sut.clock.advance(by: .seconds(2))
        let first = try await p1.offer()
        #expect(first.tripId == trip.id)
        #expect(
            await sut.call("POST", "/v1/provider/offers/\(first.offerId)/decline", as: "p1", .provider).status == 204)
        await sut.providers.dispatcher.looksWaiting(atLeast: 1)
        #expect(sut.providers.dispatcher.liveOffer(forTrip: trip.id) == nil)
        await sut.clock.advance(by: .seconds(2))
        #expect(try await p2.offer().tripId == trip.id)
    }

    @Test func aRequestThatLosesItsOnlyCandidateWaitsForSupply() async throws {
        let sut = try makeSUT()
        await sut.online("p1", at: ProviderBackend.north(100))
        var p1 = ProviderInbox(sut.providers, "p1")
        let near = try await requestRide(sut, "c1", north: 90)
        let far = try await requestRide(sut, "c2", north: 0)
        await sut.providers.dispatcher.looksWaiting(atLeast: 2)
        await sut.clock.advance(by: .seconds(2))
        #expect(try await p1.offer().tripId == near.id)
        #expect(sut.providers.dispatcher.liveOffer(forTrip: far.id) == nil)
        // A provider coming online is offered the waiting request at the close of its next window.
        var p2 = ProviderInbox(sut.providers, "p2")
        await sut.online("p2", at: ProviderBackend.north(-50))
        await sut.providers.dispatcher.looksWaiting(atLeast: 1)
        await sut.clock.advance(by: .seconds(2))
        #expect(try await p2.offer().tripId == far.id)
    }

    @Test func oneRequestInAWindowGetsTheGreedyAnswer() async throws {
        let sut = try makeSUT()
        await sut.online("far", at: ProviderBackend.north(900))
        await sut.online("near", at: ProviderBackend.north(200))
        var near = ProviderInbox(sut.providers, "near")
        let trip = try await sut.requestRide()
        await sut.providers.dispatcher.looksWaiting(atLeast: 1)
        await sut.clock.advance(by: .seconds(2))
        #expect(try await near.offer().tripId == trip.id)
        #expect(sut.providers.dispatcher.liveOffer(heldBy: "far") == nil)
    }

    @Test func aStoppedSearchLeavesItsWindow() async throws {
        let sut = try makeSUT()
        _ = try await sut.requestRide()
        await sut.providers.dispatcher.looksWaiting(atLeast: 1)
        // Cancelling a search runs its handler at once: the look is out of the window when `stop` returns.
        sut.providers.dispatcher.stop()
        #expect(sut.providers.dispatcher.looksWaiting == 0)
    }
}
