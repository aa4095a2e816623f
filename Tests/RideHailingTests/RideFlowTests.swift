import Foundation
import Testing
import HTTPTransport
import EnRouteModels
import TestSupport
import RideHailing  // not @testable: this is the surface `enroute ride` wires

/// The `enroute ride` flow through public API only, over HTTP fakes: estimates, request, watch, marker, cancel.
@MainActor
@Suite struct RideFlowTests {
    @Test func aRiderGetsPricesRequestsWatchesTheCarAndCancels() async throws {
        let trip = Fixtures.trip(.driverAssigned, version: 2, eta: 180)
        let moved = TripEvent.driverMoved(Fixtures.location(seq: 1, lat: 60.17, lng: 24.94, heading: 45))
        let cancelled = Fixtures.trip(.cancelled, version: 3)
        let client = ScriptedHTTPClient(
            answers: [
                try .json([
                    Estimate(productID: "economy", fare: Money(amountMinor: 990, currency: "EUR"), etaSeconds: 180)
                ]),
                try .json(Fixtures.trip(.searching, version: 1)),  // POST /v1/trips
                try .json(trip),  // GET /v1/trips/active (resync)
                try .json(cancelled),  // POST /v1/trips/T-1/cancel
            ],
            feeds: [
                .init(
                    events: [
                        ServerSentEvent(
                            event: moved.name, data: String(decoding: try moved.payload(), as: UTF8.self), id: "1")
                    ],
                    staysOpen: true)
            ])
        let server = APIServer(baseURL: URL(string: "https://api.enroute.test")!, credentials: StaticAccessToken("t"))
        let clock = ManualClock()
        let viewModel = TripViewModel(
            api: RemoteTripAPI(client: client, server: server),
            channel: SSELiveTripChannel(client: client, server: server),
            clock: clock, logger: RecordingRideLogger())

        await viewModel.loadEstimates(pickup: Fixtures.pickup, dropoff: Fixtures.dropoff)
        #expect(
            RideScreen.render(viewModel.state, marker: nil) == [
                "Choose a ride:", "  economy: EUR 9.90, pickup in 3 min",
            ])

        await viewModel.requestRide(
            TripRequest(pickup: Fixtures.pickup, dropoff: Fixtures.dropoff, productID: "economy"))
        try await eventually("the car") { viewModel.state.driverLocation != nil }
        let screen = RideScreen.render(viewModel.state, marker: viewModel.markerFrame())
        #expect(screen.first == "Trip T-1 · Driver on the way (v2)")
        #expect(screen.last == "Car: 60.17000, 24.94000 ↗ 45° NE")

        await viewModel.cancelTrip()
        await viewModel.waitForLiveToEnd()
        #expect(viewModel.state.trip?.state == .cancelled)
        #expect(client.isFeedClosed)
        #expect(
            client.requests.map { "\($0.method) \($0.url.path)" } == [
                "POST /v1/estimates", "POST /v1/trips", "GET /v1/trips/active", "GET /v1/trips/T-1/events",
                "POST /v1/trips/T-1/cancel",
            ])
    }
}
