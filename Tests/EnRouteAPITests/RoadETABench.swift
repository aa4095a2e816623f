import Foundation
import Testing
import EnRouteModels
import EnRouteDomain
import EnRouteRoads
import TestSupport

/// What following a trip costs: a fix projected onto its route, and a route recomputed. Figures only, so it runs when
/// asked: `ENROUTE_BENCH=1 swift test --filter RoadETABench` (a debug build unless `-c release`).
@Suite(.enabled(if: ProcessInfo.processInfo.environment["ENROUTE_BENCH"] != nil)) struct RoadETABench {
    @Test func projectingAFixAndRecomputingARoute() async throws {
        let roads = try await TestRoads.helsinki()
        let leg = try roads.routeNow(from: RoadETATests.start, to: RoadETATests.pickup, heading: nil)
        let progress = RouteProgress(leg)
        let fixes = stride(from: 0.0, to: leg.distanceMeters, by: 5).map { RoadETATests.along(leg, $0).point }
        let clock = ContinuousClock()
        var segment = 0, sink = 0.0
        let rounds = 200
        let projected = clock.measure {
            for _ in 0..<rounds {
                segment = 0
                for fix in fixes {
                    guard let p = progress.project(fix, from: segment) else { continue }
                    segment = p.segment
                    sink += p.remainingSeconds
                }
            }
        }
        let routes = 500
        let routed = clock.measure {
            for i in 0..<routes {
                if let leg = try? roads.routeNow(from: fixes[i % fixes.count], to: RoadETATests.pickup, heading: nil) {
                    sink += leg.durationSeconds
                }
            }
        }
        let nsPerFix =
            Double(projected.components.attoseconds / 1_000_000_000 + projected.components.seconds * 1_000_000_000)
            / Double(rounds * fixes.count)
        let usPerRoute =
            Double(routed.components.attoseconds / 1_000_000_000_000 + routed.components.seconds * 1_000_000)
            / Double(routes)
        print(
            "road ETA: \(leg.geometry.count)-point leg of \(Int(leg.distanceMeters)) m; \(Int(nsPerFix)) ns per fix "
                + "projected; \(Int(usPerRoute)) µs per route recomputed (sink \(Int(sink) % 10))"
        )
        #expect(sink > 0)
    }
}
