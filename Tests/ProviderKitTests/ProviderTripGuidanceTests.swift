import Foundation
import Synchronization
import Testing
import HTTPTransport
import EnRouteModels
@testable import ProviderKit
import TestSupport

/// A `RouteFetching` that answers from a script and records each request; an unscripted request fails the test.
final class FakeRouteFetching: RouteFetching {
    struct Call: Equatable { let trip: String; let from: Coordinate?; let heading: Double? }
    private let state = Mutex<(calls: [Call], answers: [Result<ProviderRoute, APIError>])>(([], []))

    /// Queues the answers to the next requests, in order.
    func answer(_ results: Result<ProviderRoute, APIError>...) { state.withLock { $0.answers += results } }
    var calls: [Call] { state.withLock { $0.calls } }

    func route(trip: String, from: Coordinate?, heading: Double?) async throws -> ProviderRoute {
        let next = state.withLock { s -> Result<ProviderRoute, APIError>? in
            s.calls.append(Call(trip: trip, from: from, heading: heading))
            return s.answers.isEmpty ? nil : s.answers.removeFirst()
        }
        guard let next else {
            Issue.record("unexpected route request for \(trip)")
            throw APIError.status(500)
        }
        return try next.get()
    }
}

/// The trip screen's guidance: routes fetched through the injected API, re-planned off the route, throttled.
@MainActor
@Suite struct ProviderTripGuidanceTests {
    func makeSUT(
        _ file: TemporaryStorePath
    ) async throws -> (ProviderTripViewModel, FakeRouteFetching, ManualClock, ProviderDevice, TripSnapshot) {
        let backend = TestBackend()
        let trip = try await backend.assignedRide()
        let (inner, server) = backend.client("p1", .provider)
        let http = FaultInjectingHTTPClient(wrapping: inner) { _, _ in .none }
        http.isOffline = true
        let device = try ProviderDevice(
            path: file.path, client: http, server: server, clock: backend.clock, ids: SequentialIDs("c"))
        let routes = FakeRouteFetching()
        let screen = ProviderTripViewModel(
            engine: device.engine, guidance: GuidanceSource(routes: routes, dates: backend.clock.dates))
        screen.receive(trip)
        return (screen, routes, backend.clock, device, trip)
    }

    func fix(
        _ point: Coordinate, heading: Double = 0, speed: Double = 8, accuracy: Double = 5, at clock: ManualClock
    ) -> LocationFix {
        LocationFix(
            lat: point.lat, lng: point.lng, heading: heading, speed: speed, accuracy: accuracy, recordedAt: clock.date)
    }

    @Test func theFirstPositionFetchesTheRouteFromThereAndShowsTheNextManeuver() async throws {
        let file = TemporaryStorePath()
        defer { file.remove() }
        let (screen, routes, clock, device, trip) = try await makeSUT(file)
        routes.answer(.success(LRoute.route(trip: trip.id)))
        await screen.locationChanged(fix(LRoute.start, heading: 5, at: clock))
        #expect(routes.calls == [.init(trip: trip.id, from: LRoute.start, heading: 5)])
        await screen.locationChanged(fix(LRoute.point(north: 80), at: clock))
        #expect(screen.state.guidance?.instruction == "In 120 m, turn right onto Mannerheimintie")
        #expect(routes.calls.count == 1, "moving along the route asks for nothing")
        await device.kill()
    }

    @Test func leavingTheRouteFetchesANewOneFromTheLatestPosition() async throws {
        let file = TemporaryStorePath()
        defer { file.remove() }
        let (screen, routes, clock, device, trip) = try await makeSUT(file)
        routes.answer(.success(LRoute.route(trip: trip.id)))
        await screen.locationChanged(fix(LRoute.start, at: clock))
        let off1 = LRoute.point(north: 80, east: -70), off2 = LRoute.point(north: 90, east: -80)
        routes.answer(.success(LRoute.route(trip: trip.id, from: off2)))
        await screen.locationChanged(fix(off1, heading: 270, at: clock))
        #expect(routes.calls.count == 1, "one fix off the route is not a deviation")
        await screen.locationChanged(fix(off2, heading: 270, at: clock))
        #expect(routes.calls.last == .init(trip: trip.id, from: off2, heading: 270))
        await screen.locationChanged(fix(off2, at: clock))
        #expect(screen.state.guidance?.offRouteMeters ?? 99 < 1, "the new route starts where the provider is")
        await device.kill()
    }

    /// A lost GPS and a server that does not answer: route requests back off instead of following every fix.
    @Test func failedRouteRequestsAreNotRepeatedOnEveryFix() async throws {
        let file = TemporaryStorePath()
        defer { file.remove() }
        let (screen, routes, clock, device, trip) = try await makeSUT(file)
        routes.answer(.failure(.status(503)))
        await screen.locationChanged(fix(LRoute.start, at: clock))
        for _ in 0..<10 {
            await clock.advance(by: .seconds(1))
            await screen.locationChanged(fix(LRoute.start, at: clock))
        }
        #expect(routes.calls.count == 1, "no second request within the 15 s pause")
        #expect(screen.state.guidance == nil)
        routes.answer(.success(LRoute.route(trip: trip.id)))
        await clock.advance(by: .seconds(5))
        await screen.locationChanged(fix(LRoute.start, at: clock))
        #expect(routes.calls.count == 2)
        #expect(screen.state.guidance != nil)
        await device.kill()
    }

    @Test func withoutAGuidanceSourceNothingIsFetched() async throws {
        let file = TemporaryStorePath()
        defer { file.remove() }
        let backend = TestBackend()
        let (inner, server) = backend.client("p1", .provider)
        let device = try ProviderDevice(
            path: file.path, client: inner, server: server, clock: backend.clock, ids: SequentialIDs("c"))
        let screen = ProviderTripViewModel(engine: device.engine)
        screen.receive(try await backend.assignedRide())
        await screen.locationChanged(fix(LRoute.start, at: backend.clock))
        #expect(screen.state.guidance == nil)
        await device.kill()
    }

    /// After pickup the stop changes, so the next position fetches the route to the drop-off.
    @Test func aNewStopFetchesItsRoute() async throws {
        let file = TemporaryStorePath()
        defer { file.remove() }
        let (screen, routes, clock, device, trip) = try await makeSUT(file)
        routes.answer(.success(LRoute.route(trip: trip.id)))
        await screen.locationChanged(fix(LRoute.start, at: clock))
        screen.reportStep()  // driverArrived: the next stop is the drop-off
        #expect(screen.state.guidance == nil)
        routes.answer(.success(LRoute.route(trip: trip.id, stop: .dropoff)))
        await screen.locationChanged(fix(LRoute.start, at: clock))
        #expect(routes.calls.count == 2)
        #expect(screen.state.guidance?.arrived == false)
        await device.kill()
    }

    /// `RemoteProviderAPI.route` against the real server routing on central Helsinki, and against one without roads.
    @Test func theRemoteAPIFetchesTheServersRouteAndSeesA503WithoutRoads() async throws {
        let backend = TestBackend(roads: try await TestRoads.helsinki())
        let trip = try await backend.assignedRide()
        let (http, server) = backend.client("p1", .provider)
        let start = Coordinate(lat: 60.1705, lng: 24.9420)
        let route = try await RemoteProviderAPI(client: http, server: server).route(
            trip: trip.id, from: start, heading: 180)
        #expect(route.tripId == trip.id && route.stop == .pickup && route.from == start)
        #expect(route.steps.first?.type == "depart" && route.steps.last?.type == "arrive")
        #expect(route.geometry.count >= 2)

        let bare = TestBackend()
        let other = try await bare.assignedRide()
        let (bareHTTP, bareServer) = bare.client("p1", .provider)
        await #expect(throws: APIError.self) {
            _ = try await RemoteProviderAPI(client: bareHTTP, server: bareServer).route(
                trip: other.id, from: start, heading: nil)
        }
        do { _ = try await RemoteProviderAPI(client: bareHTTP, server: bareServer).route(trip: other.id) } catch let
            error as APIError
        { #expect(error.status == 503) }
    }
}
