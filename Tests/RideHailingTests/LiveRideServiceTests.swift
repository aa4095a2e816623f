import Foundation
import Testing
import HTTPTransport
import EnRouteModels
import TestSupport
@testable import RideHailing

@MainActor
@Suite struct LiveRideServiceTests {
    private func makeSUT() -> (LiveRideService, FakeTripAPI, FakeLiveTripChannel) {
        let log = CallLog()
        let api = FakeTripAPI(log: log)
        let channel = FakeLiveTripChannel(log: log, acceptsConnections: true)
        let feed = LiveTripFeed(api: api, channel: channel, clock: ManualClock(), logger: RecordingRideLogger())
        return (LiveRideService(feed: feed), api, channel)
    }

    /// The update's sequence carries the trip version (in its high bits); the ETA is the server's for that version.
    @Test func driverMovesBecomeUpdatesCarryingTheTripsVersionAndETA() async throws {
        let (service, api, channel) = makeSUT()
        api.expect { $0.activeTrip = { _ in Fixtures.trip(.driverAssigned, version: 3, eta: 240) } }
        var updates = service.driverUpdates(rideID: "T-1").makeAsyncIterator()
        try await eventually("connected") { channel.connectionCount == 1 }

        let location = Fixtures.location(seq: 8, lat: Fixtures.pickup.lat + 0.001, lng: Fixtures.pickup.lng)
        channel.connection(0).yield(.driverMoved(location))
        let update = try #require(await updates.next())

        #expect(update.sequence >> 32 == 3)
        #expect(update.position == location.coordinate)
        #expect(update.metersAway == 111)  // 0.001° of latitude
        #expect(try await service.eta(for: update) == .seconds(240))
    }

    /// Fixes carry the server's ETA: the tracking screen's ETA moves with them although the trip's version stays put,
    /// and a late fix never brings an older ETA back.
    @Test func aFixsETAMovesTheTrackingScreenWithoutAVersionChange() async throws {
        let (service, api, channel) = makeSUT()
        api.expect { $0.activeTrip = { _ in Fixtures.trip(.driverAssigned, version: 3, eta: 400) } }
        let viewModel = RideTrackingViewModel(
            ride: Ride(trip: Fixtures.trip(.driverAssigned, version: 3)), service: service,
            logger: RecordingRideLogger())
        let tracking = Task { await viewModel.track() }
        try await eventually("connected") { channel.connectionCount == 1 }
        channel.connection(0).yield(.driverMoved(Fixtures.location(seq: 1, eta: 380)))
        try await eventually("first fix's ETA") { viewModel.eta == .seconds(380) }
        channel.connection(0).yield(.driverMoved(Fixtures.location(seq: 2, eta: 350)))
        try await eventually("second fix's ETA") { viewModel.eta == .seconds(350) }
        channel.connection(0).yield(.driverMoved(Fixtures.location(seq: 1, eta: 380)))  // late: dropped
        channel.connection(0).yield(.driverMoved(Fixtures.location(seq: 3, eta: 100)))
        try await eventually("third fix's ETA") { viewModel.eta == .seconds(100) }
        #expect(viewModel.showsArrivingBanner)
        tracking.cancel()
        await tracking.value
    }

    @Test(arguments: [
        (TripState.driverArrived, RideOutcome.driverArrived), (.onTrip, .driverArrived),
        (.cancelled, .cancelled), (.noDriversFound, .cancelled),
    ])
    func theUpdatesEndWithTheRide(state: TripState, outcome: RideOutcome) async throws {
        let (service, api, channel) = makeSUT()
        api.expect { $0.activeTrip = { _ in Fixtures.trip(.driverAssigned, version: 3, eta: 240) } }
        let updates = service.driverUpdates(rideID: "T-1")
        try await eventually("connected") { channel.connectionCount == 1 }
        channel.connection(0).yield(.tripUpdated(Fixtures.trip(state, version: 4)))

        for await _ in updates {}
        #expect(await service.outcome(rideID: "T-1") == outcome)
        #expect(channel.isClosed(0))
    }

    @Test func aRideTheServerCancelsShowsAsCancelledOnTheTrackingScreen() async throws {
        let (service, api, channel) = makeSUT()
        api.expect { $0.activeTrip = { _ in Fixtures.trip(.driverAssigned, version: 3, eta: 90) } }
        let viewModel = RideTrackingViewModel(
            ride: Ride(trip: Fixtures.trip(.driverAssigned, version: 3)), service: service,
            logger: RecordingRideLogger())
        let tracking = Task { await viewModel.track() }
        try await eventually("connected") { channel.connectionCount == 1 }
        channel.connection(0).yield(.driverMoved(Fixtures.location(seq: 1)))
        try await eventually("ETA") { viewModel.eta == .seconds(90) }
        #expect(viewModel.showsArrivingBanner)

        channel.connection(0).yield(.tripUpdated(Fixtures.trip(.cancelled, version: 4)))
        await tracking.value
        #expect(viewModel.status == .cancelled)
    }

    @Test func cancelRideCancelsTheTrip() async throws {
        let (service, api, _) = makeSUT()
        api.expect { $0.cancel = { _ in Fixtures.trip(.cancelled, version: 2) } }
        try await service.cancelRide(rideID: "T-1")
        #expect(api.log.all == ["cancel(T-1)"])
    }

    @Test func theRouteIsTheServersRoadRoute() async throws {
        let (service, api, _) = makeSUT()
        let road = [
            Fixtures.pickup, Coordinate(lat: Fixtures.pickup.lat + 0.001, lng: Fixtures.pickup.lng), Fixtures.dropoff,
        ]
        api.expect { $0.route = { id in id == "T-1" ? road : [] } }
        #expect(try RouteDecoder.decode(try await service.routeData(rideID: "T-1")) == road)
        #expect(api.log.all == ["route(T-1)"])
    }

    /// A server without a road network answers 503: the map gets the straight line from pickup to drop-off.
    @Test func withoutARoadNetworkTheRouteIsAStraightLineFromPickupToDropoff() async throws {
        let (service, api, _) = makeSUT()
        api.expect {
            $0.route = { _ in
                throw APIError.problem(
                    Problem(
                        type: "https://enroute.invalid/problems/no-road-network", title: "Service Unavailable",
                        status: 503))
            }
            $0.activeTrip = { _ in Fixtures.trip(.driverAssigned, version: 2) }
        }
        #expect(
            try RouteDecoder.decode(try await service.routeData(rideID: "T-1")) == [Fixtures.pickup, Fixtures.dropoff])
    }

    /// Any other failure is the caller's to see (the view model logs it; the map works without a line).
    @Test func aRouteThatFailsOtherwiseThrows() async throws {
        let (service, api, _) = makeSUT()
        api.expect { $0.route = { _ in throw APIError.status(404) } }
        await #expect(throws: APIError.status(404)) { _ = try await service.routeData(rideID: "T-1") }
    }
}
