import Foundation
import Testing
import EnRouteModels
import TestSupport
@testable import RideHailing

@MainActor
@Suite struct RideTrackingViewModelTests {
    let ride = Ride(id: "R-1", driverName: "Mehmet", car: "Prius", pickup: Coordinate(lat: 52.51, lng: 13.37))

    private func makeSUT(_ service: FakeRideService) -> RideTrackingViewModel {
        RideTrackingViewModel(ride: ride, service: service, logger: RecordingRideLogger())
    }

    @Test func aSlowOlderETADoesNotOverwriteANewerOne() async throws {
        let service = FakeRideService(etas: [
            1: (.seconds(200), .milliseconds(300)),  // slow
            2: (.seconds(190), .zero),
        ])  // fast
        let viewModel = makeSUT(service)
        let tracking = Task { await viewModel.track() }
        service.send(1)
        service.send(2)
        try await eventually("the fast ETA") { viewModel.eta == .seconds(190) }
        await service.clock.sleepers(atLeast: 1)
        await service.clock.advance(by: .milliseconds(300))  // the slow answer for update 1 lands now
        try await eventually("the slow answer") { service.etaAnswers.withLock { $0 } == 2 }
        tracking.cancel()
        await tracking.value  // every ETA task has finished
        #expect(viewModel.eta == .seconds(190))
    }

    @Test func theStreamEndingMeansTheDriverArrived() async {
        let service = FakeRideService(etas: [1: (.seconds(60), .zero)])
        let viewModel = makeSUT(service)
        service.send(1)
        service.driver.finish()
        await viewModel.track()
        #expect(viewModel.status == .arrived)
        #expect(!viewModel.canCancel)
    }

    @Test func theBannerShowsOnceAndStaysWhenTheETAGoesBackUp() async throws {
        let service = FakeRideService(etas: [
            1: (.seconds(130), .zero),
            2: (.seconds(110), .zero),
            3: (.seconds(125), .zero),
        ])  // a missed turn
        let viewModel = makeSUT(service)
        let tracking = Task { await viewModel.track() }
        service.send(1)
        try await eventually { viewModel.eta == .seconds(130) }
        #expect(!viewModel.showsArrivingBanner)
        service.send(2)
        try await eventually { viewModel.eta == .seconds(110) }
        #expect(viewModel.showsArrivingBanner)
        service.send(3)
        try await eventually { viewModel.eta == .seconds(125) }
        #expect(viewModel.showsArrivingBanner)
        tracking.cancel()
        await tracking.value
    }

    @Test func cancellingStopsTrackingOnceTheServerConfirms() async throws {
        let service = FakeRideService(etas: [1: (.seconds(300), .zero)], cancelResult: .success(()))
        let viewModel = makeSUT(service)
        let tracking = Task { await viewModel.track() }
        service.send(1)
        try await eventually { viewModel.status == .enRoute }
        await viewModel.cancelRide()
        await tracking.value  // returns: tracking really stopped
        #expect(viewModel.status == .cancelled)
        #expect(service.cancelCalls.withLock { $0 } == 1)
        #expect(service.streamTerminated.withLock { $0 })
    }

    @Test func aFailedCancelKeepsTracking() async throws {
        let service = FakeRideService(
            etas: [1: (.seconds(300), .zero)], cancelResult: .failure(FakeError(reason: "offline")))
        let viewModel = makeSUT(service)
        let tracking = Task { await viewModel.track() }
        service.send(1)
        try await eventually { viewModel.status == .enRoute }
        await viewModel.cancelRide()
        #expect(viewModel.status == .enRoute)
        #expect(viewModel.cancelError == "Couldn't cancel the ride. Try again.")
        #expect(viewModel.canCancel)
        #expect(!service.streamTerminated.withLock { $0 })
        tracking.cancel()
        await tracking.value
    }

    @Test func cancellingWhileFindingADriverIsAllowed() async throws {
        let service = FakeRideService(cancelResult: .success(()))
        let viewModel = makeSUT(service)
        let tracking = Task { await viewModel.track() }
        #expect(viewModel.canCancel)
        await viewModel.cancelRide()
        await tracking.value
        #expect(viewModel.status == .cancelled)
    }

    @Test func theRouteIsDecodedFromTheServiceData() async throws {
        let route = Data(#"[{"lat":52.5,"lng":13.4},{"lat":52.51,"lng":13.37}]"#.utf8)
        let viewModel = makeSUT(FakeRideService(route: route))
        await viewModel.loadRoute()
        #expect(viewModel.route == [Coordinate(lat: 52.5, lng: 13.4), Coordinate(lat: 52.51, lng: 13.37)])
    }

    @Test func aBrokenRouteIsLoggedAndTheMapGoesOnWithoutIt() async throws {
        let logger = RecordingRideLogger()
        let viewModel = RideTrackingViewModel(
            ride: ride, service: FakeRideService(route: Data("nope".utf8)), logger: logger)
        await viewModel.loadRoute()
        #expect(viewModel.route.isEmpty)
        #expect(logger.warnings.count == 1)
    }
}
