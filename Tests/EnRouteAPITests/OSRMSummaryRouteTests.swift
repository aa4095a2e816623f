import Foundation
import EnRouteDomain
import EnRouteModels
import EnRouteRoads
import Synchronization
import Testing
import TestSupport

/// `/route/v1` without geometry and steps asks the roads for a summary only, with the full answer's totals.
@Suite struct OSRMSummaryRouteTests {
    /// The shared Helsinki router, counting which kind of route each request asked for.
    final class CountingRoads: ImmediateRoadRouting {
        let inner: LocalRoadRouting
        let counts = Mutex((full: 0, summary: 0))
        init(_ inner: LocalRoadRouting) { self.inner = inner }

        func route(
            from: Coordinate, to: Coordinate, heading: Double?, departure: Date
        ) async throws(RoadRoutingError) -> RoadLeg {
            try routeNow(from: from, to: to, heading: heading)
        }
        func routeNow(from: Coordinate, to: Coordinate, heading: Double?) throws(RoadRoutingError) -> RoadLeg {
            counts.withLock { $0.full += 1 }
            return try inner.routeNow(from: from, to: to, heading: heading)
        }
        func routeSummaryNow(from: Coordinate, to: Coordinate, heading: Double?) throws(RoadRoutingError) -> RoadLeg {
            counts.withLock { $0.summary += 1 }
            return try inner.routeSummaryNow(from: from, to: to, heading: heading)
        }
        func table(
            sources: [Coordinate], destinations: [Coordinate], departure: Date
        ) async throws(RoadRoutingError) -> [[RoadCost?]] {
            try inner.tableNow(sources: sources, destinations: destinations)
        }
        func tableNow(sources: [Coordinate], destinations: [Coordinate]) throws(RoadRoutingError) -> [[RoadCost?]] {
            try inner.tableNow(sources: sources, destinations: destinations)
        }
        func nearest(_ coordinate: Coordinate, heading: Double?) async throws(RoadRoutingError) -> RoadWaypoint {
            try inner.nearestNow(coordinate, heading: heading)
        }
        func nearestNow(_ coordinate: Coordinate, heading: Double?) throws(RoadRoutingError) -> RoadWaypoint {
            try inner.nearestNow(coordinate, heading: heading)
        }
        func match(_ fixes: [RoadFix]) async throws(RoadRoutingError) -> MatchedPath { try await inner.match(fixes) }
    }

    func json(_ body: [UInt8]) throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])
    }

    @Test func aBareRouteIsASummaryWithTheFullRoutesDistanceDurationAndWaypoints() async throws {
        let roads = CountingRoads(try await TestRoads.helsinki())
        let backend = TestBackend(roads: roads)
        let path = "/route/v1/driving/24.9384,60.1699;24.9440,60.1690;24.9500,60.1750"
        let bare = try json(await backend.call("GET", path + "?overview=false&steps=false", token: nil).body)
        #expect(roads.counts.withLock { $0 } == (full: 0, summary: 2))
        let full = try json(await backend.call("GET", path + "?overview=full&steps=true", token: nil).body)
        #expect(roads.counts.withLock { $0 } == (full: 2, summary: 2))
        // Steps without an overview, or an overview without steps, still need the whole route.
        _ = await backend.call("GET", path + "?overview=false&steps=true", token: nil)
        _ = await backend.call("GET", path + "?overview=simplified", token: nil)
        #expect(roads.counts.withLock { $0 } == (full: 6, summary: 2))

        let bareRoute = try #require((bare["routes"] as? [[String: Any]])?.first)
        let fullRoute = try #require((full["routes"] as? [[String: Any]])?.first)
        for key in ["distance", "duration", "weight"] {
            #expect(bareRoute[key] as? Double == fullRoute[key] as? Double, "\(key)")
        }
        let bareLegs = try #require(bareRoute["legs"] as? [[String: Any]]),
            fullLegs = try #require(fullRoute["legs"] as? [[String: Any]])
        #expect(bareLegs.count == 2 && fullLegs.count == 2)
        for (b, f) in zip(bareLegs, fullLegs) {
            #expect(b["distance"] as? Double == f["distance"] as? Double)
            #expect(b["duration"] as? Double == f["duration"] as? Double)
        }
        let bareWaypoints = try #require(bare["waypoints"] as? [[String: Any]]),
            fullWaypoints = try #require(full["waypoints"] as? [[String: Any]])
        #expect(bareWaypoints.map { $0["location"] as? [Double] } == fullWaypoints.map { $0["location"] as? [Double] })
        #expect(bareWaypoints.map { $0["name"] as? String } == fullWaypoints.map { $0["name"] as? String })
    }
}
