import Routing
import TestSupport
import Testing

/// Observed speeds: smoothing, ageing back to the table, outliers, and the combined durations.
@Suite struct ObservedSpeedsTests {
    /// Two 1 km primary edges at 50 km/h (72 s each), one each way.
    static func network() -> RoadNetwork {
        var network = RoadNetwork(turnCosts: .none)
        let a = network.addNode(id: 1, lat: 60, lon: 25), b = network.addNode(id: 2, lat: 60.008993, lon: 25)
        network.addEdge(
            from: a, to: b, lengthMeters: 1000, durationSeconds: 72, roadClass: RoadClass.primary.edgeRawValue)
        network.addEdge(
            from: b, to: a, lengthMeters: 1000, durationSeconds: 72, roadClass: RoadClass.primary.edgeRawValue)
        return network
    }

    static let night = 3  // Monday 03:00, free-flow in the standard table
    static let options = ObservedSpeeds.Options(halfLifeSeconds: 600, maxAgeSeconds: 1800, profileWeight: 1)

    @Test func aSlowedEdgesDurationRisesWithObservationsAndDecaysBackToTheTable() throws {
        let network = Self.network()
        var speeds = ObservedSpeeds(network: network, options: Self.options)
        func duration(at now: Double) -> Double {
            speeds.durations(of: network, profile: .standard, hourOfWeek: Self.night, now: now)[0]
        }
        #expect(duration(at: 0) == 72)
        for _ in 0..<3 { #expect(speeds.record(edge: 0, seconds: 240, at: 20) == .accepted) }
        let observed = try #require(speeds.speed(ofEdge: 0, now: 20))
        #expect(observed.sampleCount == 3)
        #expect(abs(observed.seconds - 240) < 1e-9)
        #expect(abs(observed.metersPerSecond - 1000.0 / 240) < 1e-9)
        // Three fresh samples against the table's one: (3 · 240 + 72) / 4.
        let fresh = duration(at: 20)
        #expect(abs(fresh - 198) < 1e-9)
        var previous = fresh
        for now in stride(from: 200.0, through: 1800, by: 200) {
            let next = duration(at: now)
            #expect(next < previous)
            #expect(next > 72)
            previous = next
        }
        // One half-life after the last sample the samples weigh 1.5: (1.5 · 240 + 72) / 2.5.
        #expect(abs(duration(at: 620) - (1.5 * 240 + 72) / 2.5) < 1e-6)
        // Past the maximum age the edge is the table's again; the other edge never moved.
        #expect(duration(at: 1821) == 72)
        #expect(speeds.speed(ofEdge: 0, now: 1821) == nil)
        #expect(speeds.durations(of: network, profile: .standard, hourOfWeek: Self.night, now: 20)[1] == 72)
    }

    @Test func implausibleTraversalsAreRejectedAndChangeNothing() {
        let network = Self.network()
        var speeds = ObservedSpeeds(network: network, options: Self.options)
        // 1000 m in 40 s is 90 km/h, over 1.5 × 50; in 3700 s it is under 1 km/h.
        #expect(speeds.record(edge: 0, seconds: 40, at: 0) == .tooFast)
        #expect(speeds.record(edge: 0, seconds: 3700, at: 0) == .tooSlow)
        #expect(speeds.record(edge: 0, seconds: 0, at: 0) == .invalid)
        #expect(speeds.record(edge: 0, seconds: -5, at: 0) == .invalid)
        #expect(speeds.record(edge: 7, seconds: 100, at: 0) == .invalid)
        #expect(speeds.observedEdgeCount == 0)
        #expect(speeds.durations(of: network, profile: .standard, hourOfWeek: Self.night, now: 0) == [72, 72])
        // Just inside both limits is accepted.
        #expect(speeds.record(edge: 0, seconds: 49, at: 0) == .accepted)
        #expect(speeds.record(edge: 1, seconds: 3500, at: 0) == .accepted)
    }

    @Test func combinedDurationsAreObservedWhereFreshAndTheTimeOfDayTableElsewhere() {
        let network = Self.network()
        var speeds = ObservedSpeeds(network: network, options: Self.options)
        speeds.record(edge: 1, seconds: 150, at: 100)
        let mondayEight = 8
        let durations = speeds.durations(of: network, profile: .standard, hourOfWeek: mondayEight, now: 100)
        let rush = 72 / 0.65
        #expect(abs(durations[0] - rush) < 1e-9)
        #expect(abs(durations[1] - (150 + rush) / 2) < 1e-9)
    }

    @Test func aLateSampleCountsAsOldAsItIs() throws {
        let network = Self.network()
        var speeds = ObservedSpeeds(network: network, options: Self.options)
        speeds.record(edge: 0, seconds: 100, at: 600)
        speeds.record(edge: 0, seconds: 200, at: 0)
        let observed = try #require(speeds.speed(ofEdge: 0, now: 600))
        // The late one weighs a half: (100 + 0.5 · 200) / 1.5.
        #expect(abs(observed.seconds - 200.0 / 1.5) < 1e-9)
        #expect(observed.lastObservedAt == 600)
        #expect(abs(observed.weight - 1.5) < 1e-9)
    }

    @Test func pruningForgetsOnlyStaleEdges() {
        let network = Self.network()
        var speeds = ObservedSpeeds(network: network, options: Self.options)
        speeds.record(edge: 0, seconds: 100, at: 0)
        speeds.record(edge: 1, seconds: 100, at: 1000)
        speeds.prune(now: 1900)
        #expect(speeds.observedEdgeCount == 1)
        #expect(speeds.speed(ofEdge: 1, now: 1900) != nil)
    }

    @Test func aMatchedSlowDriveFeedsItsWholeEdgesIn() {
        // The straight 1 km road of the matcher's tests, 100 m edges at 36 km/h, driven at 5 m/s (20 s an edge).
        let network = MapMatcherTests.straightRoad()
        let fixes = DrivenPath.fixes(
            along: [MapMatcherTests.point(east: 50, north: 0), MapMatcherTests.point(east: 950, north: 0)],
            spacing: 5, noise: 3, seed: 3, interval: 1, start: 1000)
        let match = MapMatcher(network: network, options: MapMatcherTests.options).match(fixes)
        var speeds = ObservedSpeeds(network: network, options: Self.options)
        let result = speeds.record(match)
        #expect(result.accepted == 8)
        #expect(result.rejected == 0)
        let durations = speeds.durations(of: network, profile: TimeOfDaySpeeds(), hourOfWeek: 0, now: 1200)
        // Eight eastbound edges were driven whole at about 20 s against 10 s free-flow: about (20 + 10) / 2 each.
        for edge in match.traversals.map(\.edge) { #expect(abs(durations[Int(edge)] - 15) < 1.5) }
        #expect(durations.filter { $0 == 10 }.count == network.edgeCount - 8)
    }
}
