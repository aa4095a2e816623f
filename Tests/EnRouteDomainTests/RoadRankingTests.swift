import Foundation
import Testing
import EnRouteModels
import EnRouteDomain
import EnRouteRoads
import TestSupport

/// Dispatch ranks the geo index's shortlist by road time to the pickup, straight-line order when the table fails.
@Suite(.timeLimit(.minutes(2))) struct RoadRankingTests {
    static let pickup = Coordinate(lat: 60.1760, lng: 24.9500)
    static func candidate(_ id: String, _ metres: Double) -> DispatchCandidate {
        DispatchCandidate(
            providerId: id, position: Coordinate(lat: pickup.lat - metres / 111_195, lng: pickup.lng), distance: metres)
    }
    static let now: @Sendable () -> Date = { Date(timeIntervalSince1970: 1_792_520_000) }

    @Test func theShortestRoadTimeComesFirstWhateverTheStraightLineSays() async {
        // a is nearest in a straight line but 9 minutes by road (across the water); c has no road to the pickup.
        let candidates = [
            Self.candidate("a", 100), Self.candidate("b", 400), Self.candidate("c", 200), Self.candidate("d", 800),
        ]
        // Table rows follow the straight-line order: a, c, b, d.
        let roads = StubRoads(duration: 0, costs: [540, .infinity, 120, 300].map { $0 })
        let ranked = await RoadRanking(roads: FilteredRoads(base: roads), now: Self.now).rank(
            candidates, pickup: Self.pickup)
        #expect(ranked.map(\.providerId) == ["b", "d", "a", "c"])
    }

    @Test func aFailedTableKeepsTheStraightLineOrder() async {
        let candidates = [Self.candidate("b", 400), Self.candidate("a", 100)]
        let ranked = await RoadRanking(roads: StubRoads(duration: 0, failTable: true), now: Self.now).rank(
            candidates, pickup: Self.pickup)
        #expect(ranked.map(\.providerId) == ["a", "b"])
    }

    @Test func onHelsinkisRoadsTheOrderIsTheOrderOfRoadTimes() async throws {
        let roads = try await TestRoads.helsinki()
        let positions = [
            Coordinate(lat: 60.1660, lng: 24.9400), Coordinate(lat: 60.1700, lng: 24.9370),
            Coordinate(lat: 60.1715, lng: 24.9475), Coordinate(lat: 60.1715, lng: 24.9515),
        ]
        let candidates = positions.enumerated().map { i, p in
            DispatchCandidate(
                providerId: "p\(i)", position: p, distance: StraightLineEstimator.distance(p, Self.pickup))
        }
        let times = try roads.tableNow(sources: positions, destinations: [Self.pickup]).map {
            $0[0]?.durationSeconds ?? .infinity
        }
        let ranked = await RoadRanking(roads: roads, now: Self.now).rank(candidates, pickup: Self.pickup)
        let rankedTimes = ranked.map { c in times[Int(c.providerId.dropFirst())!] }
        #expect(rankedTimes == rankedTimes.sorted())
        #expect(rankedTimes.allSatisfy { $0.isFinite })
    }
}

/// Turns the stub's infinite costs into "no road".
struct FilteredRoads: RoadRouting {
    let base: StubRoads
    func route(
        from: Coordinate, to: Coordinate, heading: Double?, departure: Date
    ) async throws(RoadRoutingError) -> RoadLeg {
        try await base.route(from: from, to: to, heading: heading, departure: departure)
    }
    func table(
        sources: [Coordinate], destinations: [Coordinate], departure: Date
    ) async throws(RoadRoutingError) -> [[RoadCost?]] {
        try await base.table(sources: sources, destinations: destinations, departure: departure).map {
            $0.map { $0.flatMap { $0.durationSeconds.isFinite ? $0 : nil } }
        }
    }
    func nearest(_ coordinate: Coordinate, heading: Double?) async throws(RoadRoutingError) -> RoadWaypoint {
        try await base.nearest(coordinate, heading: heading)
    }
}
