import Foundation
import Testing
import TestSupport
import EnRouteModels
@testable import OrderTracking

/// A courier carrying two orders: the tracker, its terminal screen and the Live Activity say how many stops for the
/// other order come first ("1 stop before yours"), and say nothing once there are none.
@MainActor
@Suite struct OrderTrackingStopsBeforeTests {
    /// `Fixture.snapshot` with `stopsBefore` set.
    private func snapshot(
        version: Int, status: OrderStatus = .onTheWay, stopsBefore: Int?, at seconds: Double = 0
    ) -> OrderTracking {
        let s = Fixture.snapshot(
            version: version, status: status, eta: Fixture.t0...Fixture.t0.addingTimeInterval(300),
            generatedAt: Fixture.t0.addingTimeInterval(seconds))
        return OrderTracking(
            orderID: s.orderID, version: s.version, status: s.status, eta: s.eta, rider: s.rider,
            destination: s.destination, generatedAt: s.generatedAt, stopsBefore: stopsBefore)
    }

    private func makeSUT(_ snapshots: OrderTracking...) -> (OrderTrackingViewModel, OrderTrackingStore) {
        let store = OrderTrackingStore(tracking: UnusedRepository())
        for s in snapshots { store.apply(s) }
        let clock = ManualClock()
        return (OrderTrackingViewModel(order: "8F3K", store: store, freshness: .utc, clock: clock.dates), store)
    }

    @Test(arguments: [
        (Int?.none, String?.none), (0, nil), (1, "1 stop before yours"), (2, "2 stops before yours"),
    ])
    func theStopsBeforeAreWordedOnlyWhenThereAreSome(count: Int?, words: String?) {
        #expect(ETAWording.stopsBefore(count) == words)
    }

    @Test func theTrackingJSONsStopsBeforeReachesTheSnapshot() {
        let dto = TrackingDTO(
            orderId: "8F3K", version: 3, status: .onTheWay, problem: nil, eta: nil, rider: nil,
            destination: Fixture.home, generatedAt: Fixture.t0, stopsBefore: 1)
        #expect(OrderTracking(dto).stopsBefore == 1)
    }

    /// The other order is handed over: the server's next snapshot (same version, later) says 0, and the line goes.
    @Test func theTrackerShowsOneStopBeforeYoursThenNothingOnceTheOtherOrderIsHandedOver() {
        let (vm, store) = makeSUT(snapshot(version: 4, stopsBefore: 1))
        #expect(vm.viewState.stopsBefore == "1 stop before yours")
        #expect(store.apply(snapshot(version: 4, stopsBefore: 0, at: 30)))
        #expect(vm.viewState.stopsBefore == nil)
        #expect(vm.viewState.eta.hasPrefix("Arriving"), "the ETA line is unchanged")
    }

    @Test func aNewerFixAloneKeepsTheStopsBefore() {
        let (vm, store) = makeSUT(snapshot(version: 4, stopsBefore: 1, at: 10))
        let older = Fixture.snapshot(version: 4, fixAt: Fixture.t0.addingTimeInterval(5), generatedAt: Fixture.t0)
        #expect(store.apply(older))
        #expect(vm.viewState.stopsBefore == "1 stop before yours")
    }

    @Test func anEndedOrderHasNoStopsBefore() {
        let (vm, _) = makeSUT(snapshot(version: 9, status: .delivered, stopsBefore: 1))
        #expect(vm.viewState.stopsBefore == nil)
    }

    @Test func theTerminalScreenPrintsTheLineUnderTheETA() throws {
        let (vm, _) = makeSUT(snapshot(version: 4, stopsBefore: 2))
        let lines = TrackerScreen.render(vm.viewState, offline: false)
        let eta = try #require(lines.firstIndex(of: vm.viewState.eta))
        #expect(lines[eta + 1] == "2 stops before yours")
    }

    /// The app's own card update writes the same field the server's push carries.
    @Test func theLiveActivityContentCarriesTheStopsBefore() {
        let content = LiveActivityContent(
            status: .onTheWay, eta: nil, staleDate: Fixture.t0, stopsBefore: 1)
        #expect(content.contentState == OrderActivityContentState(status: .onTheWay, etaLatest: nil, stopsBefore: 1))
        #expect(content.contentState.stopsLine == "1 stop before yours")
        let ended = LiveActivityContent(status: .delivered, eta: nil, staleDate: Fixture.t0, stopsBefore: 1)
        #expect(ended.contentState.stopsBefore == nil)
    }

    @Test func theEngineUpdatesTheCardWithEachSnapshotsStopsBefore() async throws {
        let activities = FakeActivityController()
        activities.running = ["8F3K"]
        let feed = FedSnapshots()
        let engine = OrderLiveActivityEngine(
            tracking: FakeTokens(), snapshots: feed, activities: activities,
            lifecycle: ManualAppLifecycle(phase: .foreground))
        engine.start()
        feed.feed(snapshot(version: 4, stopsBefore: 1, at: 10), snapshot(version: 4, stopsBefore: 0, at: 20))
        try await eventually { activities.contents.count == 2 }
        #expect(activities.contents.map(\.contentState.stopsBefore) == [1, 0])
        #expect(activities.contents.map(\.contentState.stopsLine) == ["1 stop before yours", nil])
        engine.stop()
    }
}
