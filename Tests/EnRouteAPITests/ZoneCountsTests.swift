import Synchronization
import Testing
import EnRouteModels
import EnRouteDomain
import TestSupport

/// What the zones count each minute: the rides waiting for a provider, and the idle providers with a fresh position.
@Suite(.timeLimit(.minutes(1))) struct ZoneCountsTests {
    @Test func waitingRidesAndIdleProvidersWithAFreshPositionAreCounted() async throws {
        let sut = try ProviderBackend(startDispatch: false)
        await sut.online("idle", at: ProviderBackend.north(100))
        await sut.online("busy", at: ProviderBackend.north(200))
        let first = try await sut.requestRide("c1")
        _ = try await sut.requestRide("c2")
        #expect(await sut.assign(first.id, to: "busy").status == 200)
        let counts = try await sut.providers.zoneCounts()
        #expect(counts.open == [ProviderBackend.pickup])
        #expect(counts.idle == [ProviderBackend.north(100)])
    }

    @Test func aProviderWhosePositionRanOutIsNotCounted() async throws {
        let sut = try ProviderBackend(startDispatch: false)
        await sut.online("p1", at: ProviderBackend.north(100))
        await sut.clock.advance(by: .seconds(121))
        #expect(try await sut.providers.zoneCounts().idle.isEmpty)
    }

    @Test func aQuoteIsPricedFromItsZoneAsLastCounted() async throws {
        let sut = try ProviderBackend(startDispatch: false)
        _ = try await sut.requestRide("c1")
        _ = try await sut.requestRide("c2")
        #expect(await sut.backend.backend.payments.quotes.demandMultiplier(at: ProviderBackend.pickup) == 1)
        await sut.backend.backend.zones.sample()
        // Two rides waiting, nobody idle: 1 + (2 - 1) × 0.5.
        #expect(await sut.backend.backend.payments.quotes.demandMultiplier(at: ProviderBackend.pickup) == 1.5)
        let body = try await sut.backend.rideBody("c3")
        let quoteId = try #require(body.split(separator: "\"").last { $0.hasPrefix("q_") })
        let quote = try #require(try await sut.backend.backend.payments.quotes.store.quote(id: String(quoteId)))
        let zone = HexGrid().cell(of: ProviderBackend.pickup).description
        #expect(quote.demand == 1.5 && quote.demandZone == DemandZone(zone: zone, open: 2, idle: 0))
        // Another zone, 3 km away, is calm.
        #expect(await sut.backend.backend.payments.quotes.demandMultiplier(at: ProviderBackend.north(3_000)) == 1)
    }

    @Test func theConsoleShowsEachZoneWithTheMultiplierAQuoteThereGets() async throws {
        let sut = try ProviderBackend(startDispatch: false)
        await sut.online("idle", at: ProviderBackend.north(3_000))
        _ = try await sut.requestRide("c1")
        _ = try await sut.requestRide("c2")
        await sut.backend.backend.zones.sample()
        let overview = json(await sut.call("GET", "/v1/ops/overview", as: "ops", .ops).body)
        let zones = try #require(overview["zones"] as? [[String: Any]])
        // Busiest first: the pickup's zone at ×1.5 with two waiting; the idle provider's zone calm.
        #expect(zones.count == 2)
        #expect(zones.first?["zone"] as? String == HexGrid().cell(of: ProviderBackend.pickup).description)
        #expect(zones.first?["multiplier"] as? Double == 1.5 && zones.first?["open"] as? Double == 2)
        #expect(zones.last?["multiplier"] as? Double == 1 && zones.last?["idle"] as? Double == 1)
    }
}

@Suite struct ZoneSamplerTests {
    struct Unreadable: Error {}

    @Test func aCountThatFailsLeavesTheFiguresAsTheyWere() async {
        let pickup = Coordinate(lat: 60.1699, lng: 24.9384)
        let fail = Mutex(false)
        let sampler = ZoneSampler {
            if fail.withLock({ $0 }) { throw Unreadable() }
            return ([pickup, pickup], [])
        }
        await sampler.sample()
        fail.withLock { $0 = true }
        await sampler.sample()
        #expect(sampler.figures(at: pickup).figures == .init(open: 2, idle: 0))
        #expect(sampler.snapshot.samples == 1)
    }
}
