import Foundation
import Testing
import TestSupport
@testable import OrderTracking

@MainActor
@Suite struct OrderTrackingViewModelTests {
    private func makeSUT(
        _ snapshots: OrderTracking..., clock: ManualClock = ManualClock()
    )
        -> (OrderTrackingViewModel, OrderTrackingStore)
    {
        let store = OrderTrackingStore(tracking: UnusedRepository())
        for snapshot in snapshots { store.apply(snapshot) }
        let vm = OrderTrackingViewModel(order: "8F3K", store: store, freshness: .utc, clock: clock.dates, ticks: clock)
        return (vm, store)
    }

    @Test func anEmptyStoreSaysGettingYourOrderAndGuessesNoStatus() async throws {
        let feed = FedSnapshots()
        let store = OrderTrackingStore(tracking: feed)
        let following = Task { await store.start() }
        defer { following.cancel() }
        let vm = OrderTrackingViewModel(
            order: "8F3K", store: store, freshness: .utc, clock: ManualClock().dates, ticks: ManualClock())
        try await eventually { vm.viewState.title == "Getting your order…" }
        #expect(vm.viewState.steps.isEmpty)
        #expect(vm.viewState.riderPin == .hidden)
        #expect(vm.viewState.banner == nil)
    }

    @Test func marksTheCurrentStepAndWordsTheETA() {
        let t = Fixture.t0
        let (vm, _) = makeSUT(
            Fixture.snapshot(
                version: 7, status: .onTheWay, eta: t.addingTimeInterval(240)...t.addingTimeInterval(480),
                fixAt: t.addingTimeInterval(-3), generatedAt: t))
        let state = vm.viewState
        #expect(state.title == "On the way")
        #expect(state.steps.map(\.progress) == [.done, .done, .current, .upcoming, .upcoming])
        #expect(state.eta == "Arriving 18:17–18:22")
        guard case .live = state.riderPin else { Issue.record("expected a live pin, got \(state.riderPin)"); return }
        #expect(state.banner == nil)
        #expect(state.destination == Fixture.home)
    }

    @Test func followsTheStoreAsNewSnapshotsArrive() {
        let (vm, store) = makeSUT(Fixture.snapshot(version: 1, status: .picking))
        #expect(vm.viewState.title == "Picking your items")
        store.apply(Fixture.snapshot(version: 2, status: .arriving))
        #expect(vm.viewState.title == "Arriving")
    }

    /// The 5-second tick re-asks the freshness policy, so the pin's age grows without new data.
    @Test func theTickAgesThePinWithoutNewData() async {
        let clock = ManualClock()
        let (vm, _) = makeSUT(
            Fixture.snapshot(
                version: 7, fixAt: Fixture.t0.addingTimeInterval(-15), generatedAt: Fixture.t0.addingTimeInterval(-15)),
            clock: clock)
        let screen = Task { await vm.onAppear() }
        await clock.sleepers(atLeast: 1)
        guard case .live = vm.viewState.riderPin else { Issue.record("expected live"); return }

        await clock.advance(by: .seconds(5))
        await clock.sleepers(atLeast: 1)
        #expect(vm.viewState.riderPin.label == "Updated 20 s ago")

        for _ in 0..<4 { await clock.advance(by: .seconds(5)); await clock.sleepers(atLeast: 1) }
        #expect(vm.viewState.riderPin.label == "Updated 40 s ago")

        for _ in 0..<17 { await clock.advance(by: .seconds(5)); await clock.sleepers(atLeast: 1) }
        #expect(vm.viewState.riderPin == .hidden)
        #expect(vm.viewState.eta == "ETA updating")

        vm.onDisappear()
        await screen.value
        #expect(clock.sleeperCount == 0)
    }

    /// A fix that reaches the screen already 16 s old (queued on a phone in a dead zone) dims when it turns 20 s old,
    /// not at the next 5-second tick.
    @Test func aFixThatArrivesOldDimsTheMomentItTurnsTwentySeconds() async throws {
        let clock = ManualClock()
        let t = clock.date
        let (vm, store) = makeSUT(
            Fixture.snapshot(version: 7, fixAt: t.addingTimeInterval(-100), generatedAt: t), clock: clock)
        let screen = Task { await vm.onAppear() }
        defer { vm.onDisappear(); screen.cancel() }
        await clock.sleepers(atLeast: 1)
        await clock.advance(by: .seconds(2))
        store.apply(
            Fixture.snapshot(version: 7, fixAt: t.addingTimeInterval(-14), generatedAt: t.addingTimeInterval(2)))
        try await eventually { if case .live = vm.viewState.riderPin { true } else { false } }
        // The 5-second tick is due at t+5; the fix turns 20 s old at t+6 (the tick after would be t+10).
        await clock.sleepers(atLeast: 1)
        await clock.advance(by: .seconds(3))
        await clock.sleepers(atLeast: 1)
        await clock.advance(by: .seconds(1))
        try await eventually { vm.viewState.riderPin.label == "Updated 20 s ago" }
    }

    /// The window turns "Running a little late" just after its latest end, not up to a tick later.
    @Test func theETATurnsLateJustAfterItsLatestEnd() async throws {
        let clock = ManualClock()
        let t = clock.date
        let (vm, _) = makeSUT(
            Fixture.snapshot(
                version: 7, eta: t.addingTimeInterval(-60)...t.addingTimeInterval(2), fixAt: t, generatedAt: t),
            clock: clock)
        let screen = Task { await vm.onAppear() }
        defer { vm.onDisappear(); screen.cancel() }
        await clock.sleepers(atLeast: 1)
        #expect(vm.viewState.eta.hasPrefix("Arriving"))
        await clock.advance(by: .milliseconds(2_001))
        try await eventually { vm.viewState.eta == "Running a little late" }
    }

    @Test func cancellingTheScreenTaskStopsTheTick() async {
        let clock = ManualClock()
        let (vm, _) = makeSUT(Fixture.snapshot(version: 1), clock: clock)
        let screen = Task { await vm.onAppear() }
        await clock.sleepers(atLeast: 1)
        screen.cancel()
        await screen.value
        #expect(clock.sleeperCount == 0)
    }

    @Test(arguments: [
        (
            OrderStatus.problem(message: "Rider delayed"), "Rider delayed",
            [OrderTrackingViewState.StepRow.Progress.done, .done, .current, .upcoming, .upcoming]
        ),
        (.cancelled(reason: "Items missing"), "Cancelled: Items missing", [.done, .done, .done, .upcoming, .upcoming]),
        (.cancelled(reason: ""), "Your order was cancelled", [.done, .done, .done, .upcoming, .upcoming]),
    ])
    func showsABannerForProblemsAndCancels(
        status: OrderStatus, banner: String, steps: [OrderTrackingViewState.StepRow.Progress]
    ) {
        let (vm, _) = makeSUT(
            Fixture.snapshot(version: 3, status: .onTheWay, fixAt: Fixture.t0),
            Fixture.snapshot(version: 4, status: status, fixAt: Fixture.t0))
        #expect(vm.viewState.banner == banner)
        #expect(vm.viewState.steps.map(\.progress) == steps)
    }

    @Test func deliveredHidesTheRider() {
        let (vm, _) = makeSUT(Fixture.snapshot(version: 9, status: .delivered, fixAt: Fixture.t0))
        #expect(vm.viewState.riderPin == .hidden)
        #expect(vm.viewState.eta == "Delivered")
        #expect(vm.viewState.steps.last?.progress == .current)
    }

    @Test func panningTheMapStopsTheAutomaticCamera() {
        let (vm, _) = makeSUT(Fixture.snapshot(version: 1))
        #expect(vm.viewState.cameraFollows)
        vm.userMovedMap()
        #expect(!vm.viewState.cameraFollows)
    }

    @Test func theHomeBannerReadsTheSameStore() {
        let clock = ManualClock()
        let (vm, store) = makeSUT(Fixture.snapshot(version: 1, status: .picking), clock: clock)
        let home = HomeBannerViewModel(store: store, freshness: .utc, clock: clock.dates)
        #expect(home.banner?.title == vm.viewState.title)
        store.apply(Fixture.snapshot(version: 2, status: .problem(message: "Rider delayed")))
        #expect(home.banner?.detail == "Rider delayed")
        #expect(vm.viewState.banner == "Rider delayed")
        store.apply(Fixture.snapshot(version: 3, status: .delivered))
        #expect(home.banner == nil)
    }
}

extension RiderPin {
    var label: String? { if case .stale(_, let label) = self { label } else { nil } }
}
