import Routing
import TestSupport
import Testing

/// The whole loop, pure: a slow drive is matched, its traversals slow the road, and the router's choice and ETA change.
@Suite struct LiveSpeedsRoutingTests {
    static let origin = RoadCoordinate(lat: 60, lon: 25)

    static func point(east: Double, north: Double) -> RoadCoordinate {
        DrivenPath.destination(
            from: DrivenPath.destination(from: origin, bearing: 90, meters: east), bearing: 0, meters: north)
    }

    /// From the west end to the east end 1 km away: "Direct", five 200 m edges, or "Detour", 300 m north, 1 km east
    /// and 300 m south; both two-way primaries at 50 km/h.
    static func network() -> RoadNetwork {
        var network = RoadNetwork(turnCosts: .none)
        func node(_ id: Int64, _ east: Double, _ north: Double) -> Int32 {
            let p = point(east: east, north: north)
            return network.addNode(id: id, lat: p.lat, lon: p.lon)
        }
        func road(_ a: Int32, _ b: Int32, _ name: String) {
            let meters = DrivenPath.distance(network.coordinate(ofNode: a), network.coordinate(ofNode: b))
            for (from, to) in [(a, b), (b, a)] {
                network.addEdge(
                    from: from, to: to, durationSeconds: meters / (50 / 3.6), roadClass: RoadClass.primary.edgeRawValue,
                    name: name)
            }
        }
        let direct = (0...5).map { node(Int64($0), Double($0) * 200, 0) }
        for index in 0..<5 { road(direct[index], direct[index + 1], "Direct") }
        let northWest = node(10, 0, 300), northEast = node(11, 1000, 300)
        road(direct[0], northWest, "Detour")
        road(northWest, northEast, "Detour")
        road(northEast, direct[5], "Detour")
        return network
    }

    @Test func aRoadSlowedByObservedDrivesChangesTheRouteAndItsDuration() async throws {
        let network = Self.network()
        let from = Self.point(east: 0, north: 0), to = Self.point(east: 1000, north: 0)
        let night = 3, start = 10_000.0
        let before = try await offThePool { try RoadRouter(network: network).route(from: from, to: to) }
        #expect(Set(before.edges.map { network.name(ofEdge: $0) }) == ["Direct"])
        #expect(abs(before.durationSeconds - 72) < 0.5)

        // Two providers crawl along Direct at 2.5 m/s (9 km/h), a fix a second with 3 m of noise.
        let matcher = MapMatcher(network: network, options: MapMatcher.Options(sigmaMeters: 5, betaMeters: 5))
        var speeds = ObservedSpeeds(network: network)
        for seed in [1, 2] as [UInt64] {
            let fixes = DrivenPath.fixes(
                along: [from, to], spacing: 2.5, noise: 3, seed: seed, interval: 1, start: start)
            let match = matcher.match(fixes)
            #expect(!match.isBroken)
            #expect(speeds.record(match).accepted == 3)
        }
        let now = start + 400
        let slowed = network.withEdgeDurations(
            speeds.durations(of: network, profile: .standard, hourOfWeek: night, now: now))
        let after = try await offThePool { try RoadRouter(network: slowed).route(from: from, to: to) }
        // The ends snap onto the junctions, where a zero-length piece of Direct may start or end the route.
        #expect(Set(after.edges.dropFirst().dropLast().map { network.name(ofEdge: $0) }) == ["Detour"])
        #expect(abs(after.distanceMeters - 1600) < 1)
        // The detour's 1.6 km at 50 km/h, longer than the free road but shorter than the slowed one.
        #expect(abs(after.durationSeconds - 1600 / (50 / 3.6)) < 1)
        #expect(after.durationSeconds > before.durationSeconds)
        let slowedDirect = before.edges.reduce(0) { $0 + slowed.edgeDurationSeconds[Int($1)] }
        #expect(slowedDirect > after.durationSeconds)

        // Once the observations are stale the direct road is chosen again.
        let later = network.withEdgeDurations(
            speeds.durations(of: network, profile: .standard, hourOfWeek: night, now: now + 3600))
        let recovered = try await offThePool { try RoadRouter(network: later).route(from: from, to: to) }
        #expect(recovered.edges == before.edges)
    }
}
