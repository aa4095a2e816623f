import Testing
import EnRouteModels
import TestSupport
import RideHailing
@testable import RideHailingPreviews

@Suite struct PreviewRideServiceTests {
    private let waypoints = [
        PreviewRideService.Waypoint(position: Coordinate(lat: 1, lng: 1), metersAway: 800),
        PreviewRideService.Waypoint(position: Coordinate(lat: 2, lng: 2), metersAway: 0),
    ]

    @Test func sendsOneWaypointPerIntervalThenFinishes() async throws {
        let clock = ManualClock()
        let service = PreviewRideService(clock: clock, waypoints: waypoints)
        var updates = service.driverUpdates(rideID: "R-1").makeAsyncIterator()

        await clock.sleepers(atLeast: 1)
        await clock.advance(by: .seconds(1))
        let first = try #require(await updates.next())
        #expect(first == DriverUpdate(sequence: 1, position: Coordinate(lat: 1, lng: 1), metersAway: 800))
        #expect(try await service.eta(for: first) == .seconds(100))

        await clock.sleepers(atLeast: 1)
        await clock.advance(by: .seconds(1))
        #expect(await updates.next()?.sequence == 2)
        #expect(await updates.next() == nil)
    }

    @Test func theDemoRouteEndsAtThePickup() async throws {
        let service = PreviewRideService()
        #expect(PreviewRideService.demoWaypoints.last?.metersAway == 0)
        #expect(
            try RouteDecoder.decode(try await service.routeData(rideID: "R-1"))
                == PreviewRideService.demoWaypoints.map(\.position))
    }

    @Test func theRouteIsTheWaypoints() async throws {
        let service = PreviewRideService(clock: ManualClock(), waypoints: waypoints)
        #expect(try RouteDecoder.decode(try await service.routeData(rideID: "R-1")) == waypoints.map(\.position))
    }
}
