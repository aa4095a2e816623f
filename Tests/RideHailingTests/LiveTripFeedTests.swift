import Foundation
import Testing
import EnRouteModels
import TestSupport
@testable import RideHailing

/// The request flow and the tracking screen over one `LiveTripFeed`: one connection, one state.
@MainActor
@Suite struct LiveTripFeedTests {
    struct SUT {
        let feed: LiveTripFeed
        let api: FakeTripAPI
        let channel: FakeLiveTripChannel
        let log: CallLog
    }

    private func makeSUT() -> SUT {
        let log = CallLog()
        let api = FakeTripAPI(log: log)
        let channel = FakeLiveTripChannel(log: log, acceptsConnections: true)
        return SUT(
            feed: LiveTripFeed(api: api, channel: channel, clock: ManualClock(), logger: RecordingRideLogger()),
            api: api, channel: channel, log: log)
    }

    /// Both screens on one trip: one resync and one connection, and a fix reaches both.
    @Test func theRequestFlowAndTheTrackingScreenShareOneConnection() async throws {
        let sut = makeSUT()
        sut.api.expect { $0.activeTrip = { _ in Fixtures.trip(.driverAssigned, version: 2, eta: 300) } }
        let map = TripViewModel(feed: sut.feed, clock: ManualClock())
        await map.restoreActiveTrip()
        try await eventually("connected") { sut.channel.connectionCount == 1 }
        let tracking = RideTrackingViewModel(
            ride: Ride(trip: Fixtures.trip(.driverAssigned, version: 2)),
            service: LiveRideService(feed: sut.feed), logger: RecordingRideLogger())
        let watching = Task { await tracking.track() }

        let fix = Fixtures.location(seq: 1, eta: 240)
        sut.channel.connection(0).yield(.driverMoved(fix))
        try await eventually("the tracking screen's ETA") { tracking.eta == .seconds(240) }
        #expect(map.state.driverLocation == fix)
        #expect(map.state.etaSeconds == 240)
        #expect(tracking.driverPosition == fix.coordinate)
        #expect(sut.channel.connectionCount == 1)
        #expect(sut.log.all == ["activeTrip", "activeTrip", "events(T-1)"])
        watching.cancel()
        await watching.value
        #expect(!sut.channel.isClosed(0), "the map still follows the trip")
        map.stopLive()
        await map.waitForLiveToEnd()
        // The tracking screen's follower leaves on its own task; whichever of the two leaves last closes the
        // connection.
        try await eventually("the last follower closed the connection") { sut.channel.isClosed(0) }
        #expect(sut.channel.connectionCount == 1)
    }

    /// A cancel the map's sheet sends ends the tracking screen too: the answer goes through the shared feed.
    @Test func aCancelFromTheRequestFlowEndsTheTrackingScreen() async throws {
        let sut = makeSUT()
        sut.api.expect {
            $0.activeTrip = { _ in Fixtures.trip(.driverAssigned, version: 2, eta: 300) }
            $0.cancel = { _ in Fixtures.trip(.cancelled, version: 3) }
        }
        let map = TripViewModel(feed: sut.feed, clock: ManualClock())
        await map.restoreActiveTrip()
        let tracking = RideTrackingViewModel(
            ride: Ride(trip: Fixtures.trip(.driverAssigned, version: 2)),
            service: LiveRideService(feed: sut.feed), logger: RecordingRideLogger())
        let watching = Task { await tracking.track() }
        try await eventually("connected") { sut.channel.connectionCount == 1 }
        sut.channel.connection(0).yield(.driverMoved(Fixtures.location(seq: 1)))
        try await eventually("en route") { tracking.status == .enRoute }

        await map.cancelTrip()
        await watching.value
        await map.waitForLiveToEnd()
        #expect(tracking.status == .cancelled)
        #expect(sut.feed.state.trip?.state == .cancelled)
        #expect(sut.channel.isClosed(0))
    }

    /// A follower that joins late gets the current state at once, without a second resync or connection.
    @Test func aLateFollowerGetsTheCurrentStateAtOnce() async throws {
        let sut = makeSUT()
        sut.api.expect { $0.activeTrip = { _ in Fixtures.trip(.driverAssigned, version: 4, eta: 120) } }
        let first = Task { await sut.feed.follow(tripID: "T-1") { _ in true } }
        try await eventually("connected") { sut.channel.connectionCount == 1 }
        var seen: [LiveTripState] = []
        let second = Task {
            await sut.feed.follow(tripID: "T-1") {
                seen.append($0); return seen.count < 2
            }
        }
        try await eventually("the current state") { seen.count == 1 }
        #expect(seen.first?.trip?.version == 4)
        #expect(seen.first?.eta.seconds == 120)
        sut.channel.connection(0).yield(.tripUpdated(Fixtures.trip(.driverAssigned, version: 5, eta: 100)))
        await second.value  // returned false on its second state
        #expect(seen.map { $0.trip?.version } == [4, 5])
        #expect(!sut.channel.isClosed(0))
        first.cancel()
        await first.value
        #expect(sut.channel.isClosed(0))
        #expect(sut.log.count("activeTrip") == 1)
    }

    /// Old versions and old fixes change nothing, so no follower hears of them.
    @Test func olderVersionsAndFixesAreNotPublished() async throws {
        let sut = makeSUT()
        sut.api.expect { $0.activeTrip = { _ in Fixtures.trip(.driverAssigned, version: 3) } }
        var versions: [Int?] = [], seqs: [Int64?] = []
        let following = Task {
            await sut.feed.follow(tripID: "T-1") {
                versions.append($0.trip?.version); seqs.append($0.driverLocation?.seq); return true
            }
        }
        try await eventually("connected") { sut.channel.connectionCount == 1 }
        let connection = sut.channel.connection(0)
        connection.yield(.tripUpdated(Fixtures.trip(.driverAssigned, version: 2)))
        connection.yield(.driverMoved(Fixtures.location(seq: 5)))
        connection.yield(.driverMoved(Fixtures.location(seq: 4)))
        connection.yield(.tripUpdated(Fixtures.trip(.completed, version: 4)))
        await following.value  // the trip is over: the feed ends every follower
        #expect(versions == [3, 3, 4])
        #expect(seqs == [nil, 5, 5])
        #expect(sut.channel.isClosed(0))
    }
}
