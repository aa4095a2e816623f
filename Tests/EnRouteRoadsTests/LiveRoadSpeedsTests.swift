import EnRouteDomain
import EnRouteModels
import EnRouteRoads
import Foundation
import Routing
import Testing
import TestSupport

/// Sunday 03:00 in Helsinki (every class at free flow in the standard table) and Monday 08:00 (the morning rush).
private let sundayNight = Date(timeIntervalSince1970: 1_796_778_000)  // 2026-12-06 01:00 UTC
private let mondayRush = Date(timeIntervalSince1970: 1_796_796_000 + 86_400)  // 2026-12-07 06:00 UTC
private let helsinki = TimeZone(identifier: "Europe/Helsinki")!

/// Fixes every 2 s along `leg`'s geometry at `speed` metres a second, starting at `start` (no noise).
private func drive(_ leg: RoadLeg, speed: Double, start: Date) -> [LocationFix] {
    DrivenPath.fixes(
        along: leg.geometry.map { RoadCoordinate(lat: $0.lat, lon: $0.lng) }, spacing: 2 * speed, noise: 0, seed: 1,
        interval: 2, start: start.timeIntervalSince1970
    ).map {
        LocationFix(
            lat: $0.coordinate.lat, lng: $0.coordinate.lon, heading: 0, speed: speed, accuracy: 5,
            recordedAt: Date(timeIntervalSince1970: $0.time))
    }
}

@Suite struct LiveRoadSpeedsTests {
    // Kamppi to Kluuvi, about 1 km as the crow flies: several streets could carry it.
    let from = Coordinate(lat: 60.1670, lng: 24.9365), to = Coordinate(lat: 60.1690, lng: 24.9490)

    @Test func slowDrivesOnTheRouteSlowItAndTheNextRouteAvoidsOrPaysForIt() async throws {
        let roads = try await TestRoads.fresh("Helsinki-clean.osm.pbf")
        let live = LiveRoadSpeeds(roads: roads, options: .init(timeZone: helsinki))
        #expect(
            try await offThePool { live.refresh(now: sundayNight) }.applied == false,
            "free flow at night: nothing to change")
        let before = try await roads.route(from: from, to: to, heading: nil, departure: sundayNight)
        // Three providers crawl along it at 1.5 m/s (5.4 km/h).
        for provider in ["p1", "p2", "p3"] {
            live.observe(
                provider: provider, fixes: drive(before, speed: 1.5, start: sundayNight.addingTimeInterval(-900)))
        }
        let refresh = try await offThePool { live.refresh(now: sundayNight, flush: true) }
        #expect(refresh.windowsMatched == 3)
        #expect(refresh.traversalsAccepted > 3)
        #expect(refresh.applied)
        #expect(live.observedEdgeCount > 0)
        let after = try await roads.route(from: from, to: to, heading: nil, departure: sundayNight)
        // Weights only went up, so the best route got slower; it either pays for the crawl or leaves those streets.
        #expect(after.durationSeconds > before.durationSeconds)
        #expect(after.geometry != before.geometry || after.durationSeconds > before.durationSeconds * 1.2)
        let slowedDriven = try await roads.table(sources: [from], destinations: [to], departure: sundayNight)[0][0]
        #expect(
            abs((slowedDriven?.durationSeconds ?? 0) - after.durationSeconds) < 0.2, "tables read the same new weights")
    }

    @Test func theMorningRushSlowsArterialsThroughTheTimeOfDayTable() async throws {
        let roads = try await TestRoads.fresh("Helsinki-clean.osm.pbf")
        let live = LiveRoadSpeeds(roads: roads, options: .init(timeZone: helsinki))
        let night = try await roads.route(from: from, to: to, heading: nil, departure: sundayNight)
        let refresh = try await offThePool { live.refresh(now: mondayRush) }
        #expect(refresh.applied)
        #expect(refresh.edgesChanged > 100)
        let rush = try await roads.route(from: from, to: to, heading: nil, departure: mondayRush)
        #expect(rush.durationSeconds > night.durationSeconds * 1.1)
        // Back at night the free-flow weights return.
        #expect(try await offThePool { live.refresh(now: sundayNight) }.applied)
        let again = try await roads.route(from: from, to: to, heading: nil, departure: sundayNight)
        #expect(abs(again.durationSeconds - night.durationSeconds) < 0.2)
    }

    @Test func implausibleFixesChangeNothing() async throws {
        let roads = try await TestRoads.fresh("Helsinki-clean.osm.pbf")
        let live = LiveRoadSpeeds(roads: roads, options: .init(timeZone: helsinki))
        let leg = try await roads.route(from: from, to: to, heading: nil, departure: sundayNight)
        // 60 m/s through the city centre: a bad clock or a teleporting phone, not a speed.
        live.observe(provider: "p1", fixes: drive(leg, speed: 60, start: sundayNight.addingTimeInterval(-120)))
        let refresh = try await offThePool { live.refresh(now: sundayNight, flush: true) }
        #expect(refresh.traversalsAccepted == 0)
        #expect(refresh.applied == false)
    }

    @Test func theRunLoopSwapsNewWeightsInWithinOneRefreshInterval() async throws {
        let roads = try await TestRoads.fresh("Helsinki-clean.osm.pbf")
        let clock = ManualClock(start: sundayNight)
        let live = LiveRoadSpeeds(roads: roads, options: .init(refreshInterval: .seconds(10), timeZone: helsinki))
        let before = try await roads.route(from: from, to: to, heading: nil, departure: sundayNight)
        for provider in ["p1", "p2", "p3"] {
            // Full windows (30 fixes), so the loop's refresh matches them without a flush.
            live.observe(
                provider: provider, fixes: drive(before, speed: 1.5, start: sundayNight.addingTimeInterval(-900)))
        }
        let loop = Task { await live.run(clock: clock, now: { clock.date }) }
        defer { loop.cancel() }
        // One interval: the loop wakes, refreshes on its own thread (watched through the graph's generation).
        try await eventually(
            "the slowed weights are swapped in", advancing: clock, by: .seconds(10), steps: 1, sleepers: 1,
            yieldsPerStep: 10_000_000
        ) { roads.generation == 1 }
        let after = try await roads.route(from: from, to: to, heading: nil, departure: clock.date)
        #expect(after.durationSeconds > before.durationSeconds)
        #expect(after.geometry != before.geometry || after.durationSeconds > before.durationSeconds * 1.2)
    }
}
