import Foundation
import Testing
import HTTPTransport
import EnRouteModels
@testable import ProviderKit
import TestSupport

/// A courier carrying two orders: the trip screen names the first planned stop, guidance leads to that stop's order,
/// and an offer made meanwhile shows the route over both.
@MainActor
@Suite struct StackedTripTests {
    static let shopB = Coordinate(lat: 60.1650, lng: 24.9300)
    static let homeB = Coordinate(lat: 60.1900, lng: 24.9600)

    /// `stops` over orders A1 (collected, on its way) and B2 (to collect), in the order the server plans them.
    static func route(_ stops: [(String, RouteStop)]) -> [PlannedStop] {
        stops.map { trip, stop in
            let at = trip == "A1" ? Fixtures.dropoff : stop == .pickup ? shopB : homeB
            return PlannedStop(tripId: trip, stop: stop, at: at, secondsFromPrevious: 180)
        }
    }

    static let plan = route([("B2", .pickup), ("A1", .dropoff), ("B2", .dropoff)])

    static func order(_ id: String, status: String, version: Int = 3, stops: [PlannedStop]? = plan) -> TripSnapshot {
        var trip = Fixtures.trip(id, kind: "delivery", status: status, version: version)
        trip.stops = stops
        return trip
    }

    func makeSUT(
        _ file: TemporaryStorePath
    ) throws -> (ProviderTripViewModel, FakeRouteFetching, ManualClock, ProviderDevice) {
        let clock = ManualClock()
        let device = try ProviderDevice(
            path: file.path, client: ScriptedHTTPClient(), server: Fixtures.server, clock: clock,
            ids: SequentialIDs("c"))
        let routes = FakeRouteFetching()
        let screen = ProviderTripViewModel(
            engine: device.engine, guidance: GuidanceSource(routes: routes, dates: clock.dates))
        return (screen, routes, clock, device)
    }

    func fix(_ point: Coordinate, at clock: ManualClock) -> LocationFix {
        LocationFix(lat: point.lat, lng: point.lng, heading: 0, speed: 8, accuracy: 5, recordedAt: clock.date)
    }

    @Test func theTripScreenNamesTheFirstPlannedStopEvenForTheOtherOrder() async throws {
        let file = TemporaryStorePath()
        defer { file.remove() }
        let (screen, _, _, device) = try makeSUT(file)
        screen.receive(Self.order("A1", status: "onTheWay"))
        screen.receive(Self.order("B2", status: "picking"))
        #expect(screen.state.trip?.id == "A1", "the trip on screen stays the first")
        #expect(screen.state.nextStop == Self.plan[0])
        #expect(screen.state.nextStopText == "Collect order B2")
        await device.kill()
    }

    @Test func guidanceAsksForTheRouteOfTheFirstStopsOrder() async throws {
        let file = TemporaryStorePath()
        defer { file.remove() }
        let (screen, routes, clock, device) = try makeSUT(file)
        screen.receive(Self.order("A1", status: "onTheWay"))
        screen.receive(Self.order("B2", status: "picking"))
        routes.answer(.success(LRoute.route(trip: "B2", stop: .pickup)))
        await screen.locationChanged(fix(LRoute.start, at: clock))
        #expect(routes.calls.map(\.trip) == ["B2"])
        await screen.locationChanged(fix(LRoute.point(north: 80), at: clock))
        #expect(screen.state.guidance?.instruction == "In 120 m, turn right onto Mannerheimintie")
        #expect(routes.calls.count == 1, "moving along the route to B2's shop asks for nothing")
        await device.kill()
    }

    /// The other order collected (its news reaches the phone): the next stop is A1's customer, and guidance drops the
    /// route to B2's shop and asks for A1's.
    @Test func onceTheOtherOrderIsCollectedTheNextStopIsThisOrdersHandOver() async throws {
        let file = TemporaryStorePath()
        defer { file.remove() }
        let (screen, routes, clock, device) = try makeSUT(file)
        screen.receive(Self.order("A1", status: "onTheWay"))
        screen.receive(Self.order("B2", status: "picking"))
        routes.answer(.success(LRoute.route(trip: "B2", stop: .pickup)))
        await screen.locationChanged(fix(LRoute.start, at: clock))
        screen.receive(Self.order("B2", status: "onTheWay", version: 4))
        #expect(screen.state.nextStopText == "Hand over order A1")
        #expect(screen.state.guidance == nil)
        routes.answer(.success(LRoute.route(trip: "A1", stop: .dropoff)))
        await screen.locationChanged(fix(LRoute.start, at: clock))
        #expect(routes.calls.map(\.trip) == ["B2", "A1"])
        #expect(screen.state.guidance != nil)
        await device.kill()
    }

    @Test func aTripCarriedAloneHasNoPlannedStopAndIsGuidedToItsOwn() async throws {
        let file = TemporaryStorePath()
        defer { file.remove() }
        let (screen, routes, clock, device) = try makeSUT(file)
        screen.receive(Self.order("A1", status: "onTheWay", stops: nil))
        #expect(screen.state.nextStop == nil && screen.state.nextStopText == nil)
        routes.answer(.success(LRoute.route(trip: "A1", stop: .dropoff)))
        await screen.locationChanged(fix(LRoute.start, at: clock))
        #expect(routes.calls.map(\.trip) == ["A1"])
        await device.kill()
    }

    /// Stops the phone knows are made drop out before the server replans; one order left is no plan at all.
    @Test func stopsMadeOnThePhoneLeaveThePlan() {
        let a1 = LocalTrip(server: Self.order("A1", status: "onTheWay"))
        let collected = LocalTrip(server: Self.order("B2", status: "picking"), displayedStatus: "onTheWay")
        #expect(
            ProviderTripViewModel.stopsLeft(Self.plan, trips: ["A1": a1, "B2": collected])
                == Array(Self.plan.dropFirst()))
        let delivered = LocalTrip(server: Self.order("B2", status: "delivered"))
        #expect(ProviderTripViewModel.stopsLeft(Self.plan, trips: ["A1": a1, "B2": delivered]) == nil)
        #expect(
            ProviderTripViewModel.stopsLeft(Self.plan, trips: [:]) == Self.plan, "unknown orders: the server's word")
    }

    @Test func aStopIsNamedByWhatHappensThereAndTheOrdersShortID() {
        let stop = PlannedStop(
            tripId: "8f3k2a91-0c4e-4b8e-9d1f-2f6a7b3c5e10", stop: .dropoff, at: Self.homeB, secondsFromPrevious: 0)
        #expect(ProviderTripViewState.text(stop) == "Hand over order 8F3K")
    }

    @Test func anOfferWithStopsIsShownAsAnAdditionToTheRoute() {
        var offer = Fixtures.offer(expiresAt: Date(timeIntervalSince1970: 1_792_520_015))
        #expect(OfferViewState(offer: offer, secondsLeft: 15).routeText == nil)
        offer.stops = Self.plan
        let state = OfferViewState(offer: offer, secondsLeft: 15)
        #expect(state.routeText == "Add to your route: 3 stops")
        #expect(state.routeLines == ["Collect order B2", "Hand over order A1", "Hand over order B2"])
    }
}
