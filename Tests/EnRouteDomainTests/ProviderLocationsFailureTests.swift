import Foundation
import Testing
import Synchronization
import EnRouteModels
import EnRouteDomain
import TestSupport

/// Provider locations that cannot be reached (their Redis is down) neither crash nor hang a request: ingest keeps the
/// fixes, availability and the nearby map answer 503 problem+json, and a search looks again until they answer.
///
/// Three minutes, a guard against a hang only: the search test's waits count turns of the cooperative pool, and beside
/// the
/// whole suite on PostgreSQL those turns are slow (it ran past one minute there once; alone it takes about 2 s).
@Suite(.timeLimit(.minutes(3))) struct ProviderLocationsFailureTests {
    /// Provider locations in memory that the test can make unreachable.
    final class SwitchableLocations: ProviderLocations {
        struct Unreachable: Error {}
        let base: ProviderPresence
        private let down = Atomic<Bool>(false)
        init(now: @escaping @Sendable () -> Date) { base = ProviderPresence(now: now) }

        func fail() { down.store(true, ordering: .releasing) }
        func restore() { down.store(false, ordering: .releasing) }
        private func check() throws { if down.load(ordering: .acquiring) { throw Unreachable() } }

        var fixLifetime: TimeInterval { base.fixLifetime }
        func setOnline(_ provider: String, _ online: Bool, position: Coordinate?) async throws -> Bool {
            try check(); return base.setOnline(provider, online, position: position)
        }
        func update(_ provider: String, to coordinate: Coordinate, recordedAt: Date) async throws -> Bool {
            try check(); return base.update(provider, to: coordinate, recordedAt: recordedAt)
        }
        func position(of provider: String) async throws -> ProviderPresence.Position? {
            try check(); return base.position(of: provider)
        }
        func isOnline(_ provider: String) async throws -> Bool { try check(); return base.isOnline(provider) }
        func onlineProviders() async throws -> [(id: String, position: ProviderPresence.Position?)] {
            try check(); return base.onlineProviders()
        }
        func nearest(
            to center: Coordinate, limit: Int, within radius: Double, where include: (String) -> Bool
        ) async throws -> [GeoHit<String>] {
            try check(); return base.nearest(to: center, limit: limit, within: radius, where: include)
        }
    }

    func makeSUT() throws -> (ProviderBackend, SwitchableLocations) {
        let clock = ManualClock()
        let locations = SwitchableLocations(now: { clock.date })
        return (try ProviderBackend(clock: clock, locations: locations), locations)
    }

    func problem(_ body: [UInt8]) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])
    }

    @Test func goingOnlineAnswers503ProblemWhileTheLocationsAreUnreachableAndWorksOnceTheyAnswer() async throws {
        let (sut, locations) = try makeSUT()
        locations.fail()
        let refused = await sut.call(
            "POST", "/v1/provider/availability", as: "p1", .provider,
            json: #"{"online":true,"position":{"lat":60.17,"lng":24.94}}"#)
        #expect(refused.status == 503)
        #expect(try problem(refused.body)["status"] as? Int == 503)
        #expect(sut.metrics.counter("enroute_presence_failures_total", labels: ["call": "availability"]) == 1)
        locations.restore()
        #expect(await sut.online("p1", at: ProviderBackend.north(100)) == 200)
        #expect(try await sut.providers.nearby(ProviderBackend.pickup).count == 1)
    }

    /// Going offline is what the provider asked for: their live offer is withdrawn though presence could not be
    /// written.
    @Test func goingOfflineWhileTheLocationsAreUnreachableStillWithdrawsTheLiveOffer() async throws {
        let (sut, locations) = try makeSUT()
        var inbox = ProviderInbox(sut.providers, "p1")
        #expect(await sut.online("p1", at: ProviderBackend.north(100)) == 200)
        _ = try await sut.requestRide()
        let offer = try await inbox.offer()
        locations.fail()
        #expect(await sut.offline("p1") == 503)
        #expect(sut.providers.dispatcher.liveOffer(heldBy: "p1") == nil)
        #expect(try await inbox.next(LiveEventName.offerWithdrawn.rawValue).data.isEmpty == false)
        #expect(sut.providers.dispatcher.liveOffer(forTrip: offer.tripId) == nil)
    }

    @Test func theNearbyMapAnswers503ProblemWhileTheLocationsAreUnreachable() async throws {
        let (sut, locations) = try makeSUT()
        #expect(await sut.online("p1", at: ProviderBackend.north(100)) == 200)
        locations.fail()
        let refused = await sut.call("GET", "/v1/drivers/nearby?lat=60.1699&lng=24.9384", as: "c1", .customer)
        #expect(refused.status == 503)
        #expect(
            try problem(refused.body)["detail"] as? String == "Provider presence is unavailable; try again shortly.")
    }

    /// Nothing is lost: the fixes reach the trip's path and its watchers; only the position for dispatch waits for the
    /// next batch.
    @Test func ingestKeepsTheFixesWhileTheLocationsAreUnreachable() async throws {
        let (sut, locations) = try makeSUT()
        let trip = try await sut.requestRide()
        #expect(await sut.assign(trip.id, to: "p1").status == 200)
        locations.fail()
        let uploaded = try await sut.upload("p1", batch: "b1", [sut.fix(north: 50), sut.fix(north: 60, after: 1)])
        #expect(uploaded.status == 200 && uploaded.result?.accepted == 2)
        #expect(try await sut.paths.path(tripId: trip.id).count == 2)
        #expect(try sut.trip(trip.id)?.providerFix != nil)
        #expect(sut.metrics.counter("enroute_presence_failures_total", labels: ["call": "ingest"]) == 1)
        locations.restore()
        #expect(try await sut.upload("p1", batch: "b2", [sut.fix(north: 70, after: 2)]).result?.accepted == 1)
        #expect(try await locations.position(of: "p1")?.coordinate == ProviderBackend.north(70))
    }

    /// A search that could not read the locations does not give up: it looks again every `supplyRecheck` until its
    /// deadline.
    @Test func aSearchThatCouldNotReadTheLocationsLooksAgainAndOffersOnceTheyAnswer() async throws {
        let (sut, locations) = try makeSUT()
        var inbox = ProviderInbox(sut.providers, "p1")
        #expect(await sut.online("p1", at: ProviderBackend.north(100)) == 200)
        locations.fail()
        let trip = try await sut.requestRide()
        let metrics = sut.metrics
        try await eventually("the search's look failed") {
            metrics.counter("enroute_presence_failures_total", labels: ["call": "dispatch"]) >= 1
        }
        #expect(sut.providers.dispatcher.liveOffer(forTrip: trip.id) == nil)
        locations.restore()
        let dispatcher = sut.providers.dispatcher
        try await eventually("the search looked again", advancing: sut.clock, by: .seconds(1), steps: 10) {
            dispatcher.liveOffer(forTrip: trip.id) != nil
        }
        #expect(try await inbox.offer().tripId == trip.id)
    }
}
