import Foundation
import Testing
import HTTPTransport
import TestSupport
@testable import OrderTracking

@MainActor
@Suite struct TrackingPollingEngineTests {
    struct SUT {
        let engine: TrackingPollingEngine
        let refresher: FakeRefresher
        let clock: ManualClock
        let lifecycle: ManualAppLifecycle
        let network: ManualNetworkStatus

        /// Advances and waits until the engine is asleep again (or has stopped polling).
        func advance(_ seconds: Int, sleepers: Int = 1) async {
            await clock.advance(by: .seconds(seconds))
            if sleepers > 0 { await clock.sleepers(atLeast: sleepers) }
        }
    }

    private func makeSUT() -> SUT {
        let refresher = FakeRefresher()
        let clock = ManualClock()
        let lifecycle = ManualAppLifecycle(phase: .foreground)
        let network = ManualNetworkStatus(isOnline: true)
        let engine = TrackingPollingEngine(tracking: refresher, lifecycle: lifecycle, network: network, clock: clock)
        return SUT(engine: engine, refresher: refresher, clock: clock, lifecycle: lifecycle, network: network)
    }

    /// Launch with one order on the way: fetch the active orders, then poll it every 5 s.
    private func startedOnTheWay() async -> SUT {
        let sut = makeSUT()
        sut.refresher.answer(refreshActive: { [Fixture.snapshot(version: 7, status: .onTheWay)] })
        sut.refresher.answer(refresh: { _ in Fixture.snapshot(version: 8, status: .onTheWay) })
        sut.engine.start()
        await sut.clock.sleepers(atLeast: 1)
        return sut
    }

    /// Seed flow 2: background stops polling; foreground fetches at once; a failed fetch backs off 5 s.
    @Test func backgroundStopsForegroundFetchesAtOnceAndAFailureBacksOff() async throws {
        let sut = await startedOnTheWay()
        #expect(sut.refresher.calls == [.active])
        await sut.advance(5)
        #expect(sut.refresher.calls == [.active, .order("8F3K")])

        sut.lifecycle.set(.background)
        #expect(sut.clock.sleeperCount == 0)
        await sut.clock.advance(by: .seconds(120))
        #expect(sut.refresher.calls.count == 2)

        sut.refresher.answer(refresh: { _ in throw FakeError.offline })
        sut.lifecycle.set(.foreground)
        await sut.clock.sleepers(atLeast: 1)
        try await eventually { sut.refresher.calls.count == 4 }
        #expect(Set(sut.refresher.calls.suffix(2)) == [.active, .order("8F3K")])
        #expect(sut.engine.isFailing)

        await sut.advance(4)
        #expect(sut.refresher.orderCalls() == 2)
        await sut.advance(1)
        #expect(sut.refresher.orderCalls() == 3)
        sut.engine.stop()
    }

    @Test func cadenceFollowsTheStageAndStopsOnceTerminal() async throws {
        let sut = makeSUT()
        sut.refresher.answer(refreshActive: { [Fixture.snapshot(version: 1, status: .picking)] })
        sut.refresher.answer(refresh: { _ in Fixture.snapshot(version: 2, status: .picking) })
        sut.engine.start()
        await sut.clock.sleepers(atLeast: 1)

        await sut.advance(14)
        #expect(sut.refresher.orderCalls() == 0)
        sut.refresher.answer(refresh: { _ in Fixture.snapshot(version: 3, status: .onTheWay) })
        await sut.advance(1)
        #expect(sut.refresher.orderCalls() == 1)

        sut.refresher.answer(refresh: { _ in Fixture.snapshot(version: 4, status: .delivered) })
        await sut.advance(4)
        #expect(sut.refresher.orderCalls() == 1)
        await sut.advance(1, sleepers: 0)
        try await eventually { sut.refresher.orderCalls() == 2 }
        await sut.clock.advance(by: .seconds(300))
        #expect(sut.refresher.orderCalls() == 2)
        #expect(sut.clock.sleeperCount == 0)

        // Foreground again: a finished order is not polled.
        sut.refresher.answer(refreshActive: { [] })
        sut.lifecycle.set(.background)
        sut.lifecycle.set(.foreground)
        try await eventually { sut.refresher.calls.filter { $0 == .active }.count == 2 }
        #expect(sut.refresher.orderCalls() == 2)
    }

    @Test func errorsBackOffFiveTenTwentyThirtyAndResetOnSuccess() async {
        let sut = await startedOnTheWay()
        sut.refresher.answer(refresh: { _ in throw HTTPClientError.timedOut })
        var polls = 0
        for wait in [5, 5, 10, 20, 30, 30] {
            await sut.advance(wait - 1)
            #expect(sut.refresher.orderCalls() == polls, "no poll before \(wait) s")
            await sut.advance(1)
            polls += 1
            #expect(sut.refresher.orderCalls() == polls, "a poll after \(wait) s")
        }
        #expect(sut.engine.isFailing)
        sut.refresher.answer(refresh: { _ in Fixture.snapshot(version: 9, status: .onTheWay) })
        await sut.advance(30)
        #expect(!sut.engine.isFailing)
        sut.refresher.answer(refresh: { _ in throw HTTPClientError.timedOut })
        await sut.advance(5)
        await sut.advance(4)
        #expect(sut.refresher.orderCalls() == polls + 2)
        await sut.advance(1)
        #expect(sut.refresher.orderCalls() == polls + 3, "backoff restarted at 5 s")
        sut.engine.stop()
    }

    /// While picking, a failed poll is retried at the picking cadence (15 s), then backs off 20 and 30 s.
    @Test func aFailureWhilePickingWaitsAtLeastThePickingInterval() async {
        let sut = makeSUT()
        sut.refresher.answer(refreshActive: { [Fixture.snapshot(version: 1, status: .picking)] })
        sut.refresher.answer(refresh: { _ in throw HTTPClientError.timedOut })
        sut.engine.start()
        await sut.clock.sleepers(atLeast: 1)
        var polls = 0
        for wait in [15, 15, 15, 20, 30] {
            await sut.advance(wait - 1)
            #expect(sut.refresher.orderCalls() == polls, "no poll before \(wait) s")
            await sut.advance(1)
            polls += 1
            #expect(sut.refresher.orderCalls() == polls, "a poll after \(wait) s")
        }
        sut.engine.stop()
    }

    @Test func honoursRetryAfterOn429() async {
        let sut = await startedOnTheWay()
        sut.refresher.answer(refresh: { _ in throw APIError.retryAfter(.seconds(60), status: 429) })
        await sut.advance(5)
        #expect(sut.refresher.orderCalls() == 1)
        await sut.advance(59)
        #expect(sut.refresher.orderCalls() == 1)
        await sut.advance(1)
        #expect(sut.refresher.orderCalls() == 2)
        sut.engine.stop()
    }

    @Test func keepsOnePollInFlightPerOrder() async throws {
        let sut = await startedOnTheWay()
        let gate = Gate()
        sut.refresher.answer(refresh: { _ in
            await gate.wait()
            return Fixture.snapshot(version: 9, status: .onTheWay)
        })
        await sut.clock.advance(by: .seconds(5))
        try await eventually { gate.waiting == 1 }

        sut.refresher.answer(refreshActive: { [] })
        sut.lifecycle.set(.background)
        sut.lifecycle.set(.foreground)
        sut.engine.follow("8F3K")
        try await eventually { sut.refresher.calls.filter { $0 == .active }.count == 2 }
        for _ in 0..<100 { await Task.yield() }
        #expect(sut.refresher.orderCalls() == 1)

        gate.open()
        try await eventually { sut.refresher.orderCalls() == 2 }
        sut.engine.stop()
    }

    @Test func offlineStopsAndNetworkBackFetchesAtOnce() async throws {
        let sut = await startedOnTheWay()
        sut.network.set(online: false)
        #expect(sut.clock.sleeperCount == 0)
        await sut.clock.advance(by: .seconds(60))
        #expect(sut.refresher.calls == [.active])

        sut.network.set(online: true)
        try await eventually { sut.refresher.orderCalls() == 1 }
        #expect(sut.refresher.calls.filter { $0 == .active }.count == 2)
        sut.engine.stop()
    }

    @Test func followPollsAnOrderTheActiveListHasNotNamed() async {
        let sut = makeSUT()
        sut.refresher.answer(refreshActive: { [] })
        sut.refresher.answer(refresh: { id in Fixture.snapshot(id, version: 1, status: .arriving) })
        sut.engine.start()
        sut.engine.follow("9Z")
        await sut.clock.sleepers(atLeast: 1)
        #expect(sut.refresher.calls.contains(.order("9Z")))
        await sut.advance(5)
        #expect(sut.refresher.orderCalls() == 2)
        sut.engine.stop()
        #expect(sut.clock.sleeperCount == 0)
    }

    @Test func nothingHappensInTheBackgroundAtLaunch() async {
        let sut = makeSUT()
        sut.lifecycle.set(.background)
        sut.engine.start()
        for _ in 0..<50 { await Task.yield() }
        #expect(sut.refresher.calls.isEmpty)
    }
}
