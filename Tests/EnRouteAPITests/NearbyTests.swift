import Foundation
import Testing
import EnRouteModels
import EnRouteDomain
import EnRouteAPI
import TestSupport

/// `GET /v1/drivers/nearby`: decorative, coarse, bounded, and only supply that exists now.
@Suite(.timeLimit(.minutes(1))) struct NearbyTests {
    func makeSUT() throws -> ProviderBackend { try ProviderBackend(startDispatch: false) }

    func nearby(
        _ sut: ProviderBackend, _ query: String = "lat=60.1699&lng=24.9384", as role: Party = .customer
    ) async throws -> (status: Int, markers: [Coordinate]) {
        let r = await sut.call("GET", "/v1/drivers/nearby?\(query)", as: "a1", role)
        return (r.status, (try? WireCoding.decoder().decode([Coordinate].self, from: Data(r.body))) ?? [])
    }

    @Test func atMostTwentyCoarsenedMarkersComeBack() async throws {
        let sut = try makeSUT()
        var positions: [Coordinate] = []
        for i in 0..<30 {
            let position = Coordinate(lat: 60.1699 + Double(i % 6) * 0.0013, lng: 24.9384 + Double(i / 6) * 0.0021)
            positions.append(position)
            await sut.online("p\(i)", at: position)
        }
        let (status, markers) = try await nearby(sut)
        #expect(status == 200)
        #expect(markers.count == 20)
        for marker in markers {
            #expect(!positions.contains(marker), "a marker is never an exact position")
            let closest = positions.map { StraightLineEstimator.distance($0, marker) }.min() ?? .infinity
            #expect(closest < 200, "a marker stays near a real provider")
        }
    }

    @Test func aProvidersMarkerIsStableBetweenPollsAndSnapped() async throws {
        let sut = try makeSUT()
        await sut.online("p1", at: ProviderBackend.north(300))
        let first = try await nearby(sut).markers
        let second = try await nearby(sut).markers
        #expect(first.count == 1 && first == second)
        // Snapped to a grid of about 100 m.
        let coarse = NearbyCoarsening(seed: 42)
        let a = coarse.marker(for: "p1", at: ProviderBackend.north(300))
        let latStep = 100 / 111_195.0
        #expect(abs(a.lat / latStep - (a.lat / latStep).rounded()) < 0.01)
        #expect(first == [a])
        // Providers at one spot are spread by their own offsets.
        #expect(Set((0..<20).map { coarse.marker(for: "p\($0)", at: ProviderBackend.north(300)) }).count > 1)
    }

    @Test func onlyOnlineProvidersWithAFreshPositionAreShown() async throws {
        let sut = try makeSUT()
        await sut.online("stale", at: ProviderBackend.north(100))
        await sut.clock.advance(by: .seconds(100))
        await sut.online("fresh", at: ProviderBackend.north(200))
        await sut.online("gone", at: ProviderBackend.north(300))
        await sut.offline("gone")
        #expect(try await nearby(sut).markers.count == 2)
        await sut.clock.advance(by: .seconds(30))  // "stale" is now 130 s old
        #expect(try await nearby(sut).markers.count == 1)
        await sut.online("far", at: Coordinate(lat: 60.45, lng: 22.27))  // Turku
        #expect(try await nearby(sut).markers.count == 1)
    }

    @Test(arguments: [
        ("lng=24.9", "/lat"), ("lat=91&lng=24.9", "/lat"), ("lat=abc&lng=24.9", "/lat"),
        ("lat=60.1", "/lng"), ("lat=60.1&lng=-181", "/lng"), ("lat=60.1&lng=nan", "/lng"),
    ])
    func aBadCoordinateIs422NamingTheField(query: String, pointer: String) async throws {
        let sut = try makeSUT()
        let r = await sut.call("GET", "/v1/drivers/nearby?\(query)", as: "c1", .customer)
        #expect(r.status == 422)
        let errors = json(r.body)["errors"] as? [[String: Any]]
        #expect(errors?.first?["pointer"] as? String == pointer)
    }

    @Test(arguments: [Party.customer, .provider, .merchant, .ops])
    func anySignedInRoleMayLook(role: Party) async throws {
        let sut = try makeSUT()
        #expect(try await nearby(sut, as: role).status == 200)
    }

    @Test func anAnonymousCallerIs401() async throws {
        let sut = try makeSUT()
        let r = await sut.router.respond(
            to: .init(method: "GET", path: "/v1/drivers/nearby", query: ["lat": "60", "lng": "24"]))
        #expect(r.status == 401)
    }
}
