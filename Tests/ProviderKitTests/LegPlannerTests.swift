import Foundation
import Testing
import EnRouteModels
@testable import ProviderKit
import TestSupport

/// `enroute drive`'s legs: the server's road route when there is one, the scripted line otherwise.
@Suite struct LegPlannerTests {
    let car = LRoute.point(north: -5)

    @Test func aLegFollowsTheServersRoadFromTheCarToTheStop() async {
        let routes = FakeRouteFetching()
        routes.answer(.success(LRoute.route()))
        let leg = await LegPlanner(routes: routes).leg(trip: "T1", from: car, heading: 10, to: .pickup, at: LRoute.end)
        #expect(routes.calls == [.init(trip: "T1", from: car, heading: 10)])
        #expect(leg.source == .road(LRoute.route()))
        #expect(leg.path.waypoints.first == car, "the path starts at the car, not at the snapped road")
        #expect(leg.path.waypoints.dropFirst().first?.distance(to: LRoute.start) ?? 99 < 0.5)
        #expect(leg.path.waypoints.contains { $0.distance(to: LRoute.corner) < 0.5 }, "the path turns at the corner")
        #expect(abs(leg.path.length - 405) < 3)
    }

    @Test func withoutRoadsOnTheServerTheLegIsTheScriptedLine() async {
        let routes = FakeRouteFetching()
        routes.answer(
            .failure(
                .problem(
                    Problem(
                        type: "https://enroute.invalid/problems/no-road-network", title: "Service Unavailable",
                        status: 503))))
        let via = LRoute.point(north: 50, east: 50)
        let leg = await LegPlanner(routes: routes).leg(
            trip: "T1", from: car, heading: nil, to: .dropoff, at: LRoute.end, scripted: [via])
        #expect(leg.source == .scripted(reason: "the server has no road network"))
        #expect(leg.path.waypoints == [car, via, LRoute.end])
    }

    /// A step still on its way: the server routes to the pickup while the car heads for the drop-off.
    @Test func aRouteToAnotherStopIsNotDriven() async {
        let routes = FakeRouteFetching()
        routes.answer(.success(LRoute.route(stop: .pickup)))
        let leg = await LegPlanner(routes: routes).leg(
            trip: "T1", from: car, heading: nil, to: .dropoff, at: LRoute.end)
        #expect(leg.source == .scripted(reason: "the server routes to the pickup, not the dropoff, yet"))
        #expect(leg.path.waypoints == [car, LRoute.end])
    }
}
