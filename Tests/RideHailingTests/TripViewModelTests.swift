import Foundation
import Synchronization
import Testing
import HTTPTransport
import EnRouteModels
import TestSupport
@testable import RideHailing

@MainActor
@Suite struct TripViewModelTests {
    struct SUT {
        let viewModel: TripViewModel
        let api: FakeTripAPI
        let channel: FakeLiveTripChannel
        let clock: ManualClock
        let log: CallLog
    }

    private func makeSUT(acceptsConnections: Bool = false) -> SUT {
        let log = CallLog()
        let api = FakeTripAPI(log: log)
        let channel = FakeLiveTripChannel(log: log, acceptsConnections: acceptsConnections)
        let clock = ManualClock()
        let keys = Mutex(0)
        let viewModel = TripViewModel(
            api: api, channel: channel, clock: clock, logger: RecordingRideLogger(),
            makeKey: {
                Fixtures.key(
                    keys.withLock {
                        $0 += 1; return $0
                    })
            })
        return SUT(viewModel: viewModel, api: api, channel: channel, clock: clock, log: log)
    }

    /// Requests a ride that the server accepts as `trip`, and waits for the live loop's first connection.
    private func startLive(_ sut: SUT, activeTrip: @escaping @Sendable (Int) throws -> Trip?) async throws {
        sut.api.expect {
            $0.requestTrip = { _, _, _ in Fixtures.trip(.searching, version: 1) }
            $0.activeTrip = activeTrip
        }
        await sut.viewModel.requestRide(Fixtures.request)
    }

    // MARK: - Estimates

    @Test func estimatesLandInTheState() async {
        let sut = makeSUT()
        let estimates = [Estimate(productID: "xl", fare: Money(amountMinor: 2400, currency: "EUR"), etaSeconds: 300)]
        sut.api.expect { $0.estimate = { _, _ in estimates } }
        await sut.viewModel.loadEstimates(pickup: Fixtures.pickup, dropoff: Fixtures.dropoff)
        #expect(sut.viewModel.state.estimates == estimates)
        #expect(sut.viewModel.state.errorMessage == nil)
    }

    // MARK: - Request with retries

    @Test func aFailingRequestIsTriedThreeTimesOneThenTwoSecondsApartWithOneKey() async throws {
        let sut = makeSUT()
        sut.api.expect { $0.requestTrip = { _, _, _ in throw FakeError() } }
        let tap = Task { await sut.viewModel.requestRide(Fixtures.request) }

        try await eventually("first attempt") { sut.api.requestKeys.count == 1 }
        #expect(sut.viewModel.state.isRequesting)
        await sut.clock.sleepers(atLeast: 1)
        await sut.clock.advance(by: .milliseconds(999))
        #expect(sut.api.requestKeys.count == 1)
        await sut.clock.advance(by: .milliseconds(1))
        try await eventually("second attempt") { sut.api.requestKeys.count == 2 }

        await sut.clock.sleepers(atLeast: 1)
        await sut.clock.advance(by: .milliseconds(1999))
        #expect(sut.api.requestKeys.count == 2)
        await sut.clock.advance(by: .milliseconds(1))
        await tap.value

        #expect(sut.api.requestKeys == [Fixtures.key(1), Fixtures.key(1), Fixtures.key(1)])
        #expect(sut.viewModel.state.errorMessage == "Could not request a ride. Try again.")
        #expect(!sut.viewModel.state.isRequesting)
        #expect(sut.clock.sleeperCount == 0)
    }

    @Test func aNewTapUsesANewKey() async throws {
        let sut = makeSUT()
        sut.api.expect {
            $0.requestTrip = { call, _, _ in
                if call <= 3 { throw FakeError() }
                return Fixtures.trip(.noDriversFound, version: 2)
            }
        }
        let first = Task { await sut.viewModel.requestRide(Fixtures.request) }
        for _ in 1...2 {
            await sut.clock.sleepers(atLeast: 1)
            await sut.clock.advance(by: .seconds(2))
        }
        await first.value
        await sut.viewModel.requestRide(Fixtures.request)

        #expect(sut.api.requestKeys == [Fixtures.key(1), Fixtures.key(1), Fixtures.key(1), Fixtures.key(2)])
        #expect(sut.viewModel.state.trip?.state == .noDriversFound)
        #expect(sut.viewModel.state.errorMessage == nil)
    }

    @Test func aRetryThatSucceedsReusesTheKeyThenResyncsBeforeStreaming() async throws {
        let sut = makeSUT(acceptsConnections: true)
        sut.api.expect {
            $0.requestTrip = { call, _, _ in
                if call == 1 { throw FakeError() }
                return Fixtures.trip(.searching, version: 1)
            }
            $0.activeTrip = { _ in Fixtures.trip(.driverAssigned, version: 2, eta: 300) }
        }
        let tap = Task { await sut.viewModel.requestRide(Fixtures.request) }
        await sut.clock.sleepers(atLeast: 1)
        await sut.clock.advance(by: .seconds(1))
        await tap.value
        try await eventually("live connection") { sut.channel.connectionCount == 1 }

        #expect(sut.api.requestKeys == [Fixtures.key(1), Fixtures.key(1)])
        #expect(sut.log.all == ["requestTrip", "requestTrip", "activeTrip", "events(T-1)"])
        #expect(sut.viewModel.state.trip == Fixtures.trip(.driverAssigned, version: 2, eta: 300))
        sut.viewModel.stopLive()
    }

    @Test func aTapCancelledDuringAPauseStopsWithoutAnotherAttemptOrError() async throws {
        let sut = makeSUT()
        sut.api.expect { $0.requestTrip = { _, _, _ in throw FakeError() } }
        let tap = Task { await sut.viewModel.requestRide(Fixtures.request) }
        await sut.clock.sleepers(atLeast: 1)
        tap.cancel()
        await tap.value
        #expect(sut.api.requestKeys.count == 1)
        #expect(sut.viewModel.state.errorMessage == nil)
        #expect(!sut.viewModel.state.isRequesting)
    }

    // MARK: - Live loop

    @Test func restoringPicksUpTheActiveTripAndGoesLive() async throws {
        let sut = makeSUT(acceptsConnections: true)
        sut.api.expect { $0.activeTrip = { _ in Fixtures.trip(.driverAssigned, version: 4) } }
        await sut.viewModel.restoreActiveTrip()
        try await eventually("connected") { sut.channel.connectionCount == 1 }
        #expect(sut.viewModel.state.trip?.version == 4)
        #expect(!sut.viewModel.state.canRequest)
        #expect(sut.log.all == ["activeTrip", "activeTrip", "events(T-1)"])
        sut.viewModel.stopLive()
    }

    @Test func restoringWithoutAnActiveTripStaysIdle() async {
        let sut = makeSUT()
        sut.api.expect { $0.activeTrip = { _ in nil } }
        await sut.viewModel.restoreActiveTrip()
        #expect(sut.viewModel.state.trip == nil)
        #expect(sut.viewModel.state.canRequest)
        #expect(sut.log.all == ["activeTrip"])
    }

    @Test func theLiveLoopBacksOffTwoFourEightSixteenThenThirtySeconds() async throws {
        let sut = makeSUT()
        try await startLive(sut) { _ in throw FakeError(reason: "offline") }
        try await eventually("first resync") { sut.log.count("activeTrip") == 1 }

        for (index, pause) in [2, 4, 8, 16, 30, 30].enumerated() {
            await sut.clock.sleepers(atLeast: 1)
            await sut.clock.advance(by: .seconds(pause) - .milliseconds(1))
            #expect(sut.log.count("activeTrip") == index + 1, "too early after \(pause) s")
            await sut.clock.advance(by: .milliseconds(1))
            try await eventually("retry after \(pause) s") { sut.log.count("activeTrip") == index + 2 }
        }
        sut.viewModel.stopLive()
        await sut.viewModel.waitForLiveToEnd()
    }

    @Test(arguments: [(1, 2), (2, 4), (3, 8), (4, 16), (5, 30), (6, 30), (40, 30)])
    func theBackoffIsTwoToTheAttemptCappedAtThirty(attempt: Int, seconds: Int) {
        #expect(LiveTripLoop.backoff(attempt: attempt) == .seconds(seconds))
    }

    @Test func anEventResetsTheBackoff() async throws {
        let sut = makeSUT(acceptsConnections: true)
        try await startLive(sut) { call in
            if call <= 2 { throw FakeError(reason: "offline") }
            return Fixtures.trip(.searching, version: 1)
        }
        for pause in [2, 4] {
            await sut.clock.sleepers(atLeast: 1)
            await sut.clock.advance(by: .seconds(pause))
        }
        try await eventually("connected") { sut.channel.connectionCount == 1 }
        sut.channel.connection(0).yield(.tripUpdated(Fixtures.trip(.driverAssigned, version: 2)))
        sut.channel.connection(0).finish(throwing: FakeError(reason: "reset"))

        await sut.clock.sleepers(atLeast: 1)
        await sut.clock.advance(by: .milliseconds(1999))
        #expect(sut.log.count("activeTrip") == 3)
        await sut.clock.advance(by: .milliseconds(1))
        try await eventually("reconnect after 2 s") { sut.channel.connectionCount == 2 }
        #expect(sut.log.count("activeTrip") == 4)
        #expect(sut.viewModel.state.trip?.version == 2)
        sut.viewModel.stopLive()
    }

    @Test func aFeedThatEndsWhileTheTripIsOnReconnectsAfterAPause() async throws {
        let sut = makeSUT(acceptsConnections: true)
        try await startLive(sut) { _ in nil }
        try await eventually("connected") { sut.channel.connectionCount == 1 }
        sut.channel.connection(0).finish()
        await sut.clock.sleepers(atLeast: 1)
        await sut.clock.advance(by: .seconds(2))
        try await eventually("reconnected") { sut.channel.connectionCount == 2 }
        #expect(sut.log.all == ["requestTrip", "activeTrip", "events(T-1)", "activeTrip", "events(T-1)"])
        sut.viewModel.stopLive()
    }

    @Test func theLiveLoopStopsWhenTheTripIsNoLongerActive() async throws {
        let sut = makeSUT(acceptsConnections: true)
        try await startLive(sut) { _ in Fixtures.trip(.onTrip, version: 5) }
        try await eventually("connected") { sut.channel.connectionCount == 1 }

        sut.channel.connection(0).yield(.tripUpdated(Fixtures.trip(.completed, version: 6)))
        await sut.viewModel.waitForLiveToEnd()

        #expect(sut.viewModel.state.trip?.state == .completed)
        #expect(sut.channel.isClosed(0))
        #expect(sut.log.all == ["requestTrip", "activeTrip", "events(T-1)"])
    }

    @Test func olderTripUpdatesOnTheFeedAreDropped() async throws {
        let sut = makeSUT(acceptsConnections: true)
        try await startLive(sut) { _ in Fixtures.trip(.driverArrived, version: 4) }
        try await eventually("connected") { sut.channel.connectionCount == 1 }
        sut.channel.connection(0).yield(.tripUpdated(Fixtures.trip(.driverAssigned, version: 3)))
        sut.channel.connection(0).yield(.tripUpdated(Fixtures.trip(.onTrip, version: 5)))
        try await eventually("version 5") { sut.viewModel.state.trip?.version == 5 }
        #expect(sut.viewModel.state.trip?.state == .onTrip)
        sut.viewModel.stopLive()
    }

    @Test func driverMovesFeedTheInterpolatedMarker() async throws {
        let sut = makeSUT(acceptsConnections: true)
        try await startLive(sut) { _ in Fixtures.trip(.driverAssigned, version: 2) }
        try await eventually("connected") { sut.channel.connectionCount == 1 }

        let first = Fixtures.location(seq: 1, lat: 60.0, lng: 24.0, heading: 0)
        sut.channel.connection(0).yield(.driverMoved(first))
        try await eventually("first fix") { sut.viewModel.state.driverLocation == first }
        await sut.clock.advance(by: .seconds(1))
        let second = Fixtures.location(seq: 2, lat: 60.5, lng: 24.5, heading: 90)
        sut.channel.connection(0).yield(.driverMoved(second))
        sut.channel.connection(0).yield(.driverMoved(first))  // late duplicate: ignored
        try await eventually("second fix") { sut.viewModel.state.driverLocation == second }
        await sut.clock.advance(by: .milliseconds(1250))

        #expect(
            sut.viewModel.markerFrame()
                == MarkerFrame(coordinate: Coordinate(lat: 60.25, lng: 24.25), heading: 45, isAnimating: true))
        sut.viewModel.stopLive()
    }

    @Test func aFixsETAMovesTheRidersETAWithoutAVersionChangeAndALateOneIsDropped() async throws {
        let sut = makeSUT(acceptsConnections: true)
        try await startLive(sut) { _ in Fixtures.trip(.driverAssigned, version: 2, eta: 300) }
        try await eventually("connected") { sut.channel.connectionCount == 1 }
        try await eventually("the trip's ETA") { sut.viewModel.state.etaSeconds == 300 }

        sut.channel.connection(0).yield(.driverMoved(Fixtures.location(seq: 1, eta: 280)))
        try await eventually("first fix's ETA") { sut.viewModel.state.etaSeconds == 280 }
        sut.channel.connection(0).yield(.driverMoved(Fixtures.location(seq: 3, eta: 240)))
        sut.channel.connection(0).yield(.driverMoved(Fixtures.location(seq: 2, eta: 260)))  // late: dropped
        try await eventually("newest fix's ETA") { sut.viewModel.state.liveETA.seq == 3 }
        #expect(sut.viewModel.state.etaSeconds == 240)
        #expect(sut.viewModel.state.trip?.version == 2)
        #expect(RideScreen.render(sut.viewModel.state, marker: nil).contains("Pickup in 4 min"))

        // a newer version wins
        sut.channel.connection(0).yield(.tripUpdated(Fixtures.trip(.driverArrived, version: 3, eta: 0)))
        try await eventually("version 3") { sut.viewModel.state.trip?.version == 3 }
        #expect(sut.viewModel.state.etaSeconds == 0)
        sut.viewModel.stopLive()
    }

    // MARK: - Cancel

    @Test func cancellingAppliesTheServersTripAndStopsTheLiveLoop() async throws {
        let sut = makeSUT(acceptsConnections: true)
        try await startLive(sut) { _ in nil }
        try await eventually("connected") { sut.channel.connectionCount == 1 }
        sut.api.expect { $0.cancel = { _ in Fixtures.trip(.cancelled, version: 2) } }

        #expect(sut.viewModel.state.canCancel)
        await sut.viewModel.cancelTrip()
        await sut.viewModel.waitForLiveToEnd()

        #expect(sut.viewModel.state.trip?.state == .cancelled)
        #expect(!sut.viewModel.state.canCancel)
        #expect(sut.channel.isClosed(0))
        #expect(sut.log.all.last == "cancel(T-1)")
    }

    @Test(arguments: [
        (APIError.problem(Problem(title: "Too late", status: 409)), "This ride can no longer be cancelled."),
        (APIError.status(503), "Couldn't cancel the ride. Try again."),
    ])
    func aFailedCancelKeepsTheTripAndSaysWhy(error: APIError, message: String) async throws {
        let sut = makeSUT(acceptsConnections: true)
        try await startLive(sut) { _ in nil }
        try await eventually("connected") { sut.channel.connectionCount == 1 }
        sut.api.expect { $0.cancel = { _ in throw error } }

        await sut.viewModel.cancelTrip()

        #expect(sut.viewModel.state.errorMessage == message)
        #expect(sut.viewModel.state.trip?.state == .searching)
        #expect(!sut.channel.isClosed(0))
        sut.viewModel.stopLive()
    }
}
