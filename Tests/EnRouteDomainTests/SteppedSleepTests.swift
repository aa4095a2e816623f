import Synchronization
import Testing
import EnRouteDomain
import TestSupport

/// Long waits that are usually cut short arm only short timers: a cancelled timer keeps its memory until its deadline,
/// so a server that arms and cancels a two-minute wait per trip would hold two minutes of them.
@Suite(.timeLimit(.minutes(1))) struct SteppedSleepTests {
    @Test func aLongSleepArmsNoTimerLongerThanItsStepAndEndsAtItsDeadline() async throws {
        let clock = ManualClock()
        let sleeper = Task { try await clock.sleep(for: .seconds(30), inStepsOf: .seconds(1)) }
        await clock.sleepers(atLeast: 1)
        #expect(try #require(clock.farthestDeadline) <= .seconds(1))
        await clock.advance(by: .seconds(29))
        // The sleep arms its next step once it runs again (the clock only yields a few turns to it).
        #expect(await comesToHold { clock.sleeperCount == 1 }, "not done before its deadline")
        #expect(try #require(clock.farthestDeadline) <= .seconds(1))
        await clock.advance(by: .seconds(1))
        try await sleeper.value
        #expect(clock.now.offset == .seconds(30))
    }

    @Test func aCancelledSleepEndsAtOnce() async {
        let clock = ManualClock()
        let sleeper = Task { try await clock.sleep(for: .seconds(120), inStepsOf: .seconds(1)) }
        await clock.sleepers(atLeast: 1)
        sleeper.cancel()
        await #expect(throws: CancellationError.self) { try await sleeper.value }
        #expect(clock.sleeperCount == 0)
    }

    @Test func aPollLoopPausesForItsWholeIntervalInShortTimersUntilWoken() async throws {
        let clock = ManualClock()
        let loop = PollLoop(clock: clock, interval: .seconds(60))
        let (runs, ran) = AsyncStream.makeStream(of: Void.self)
        let worked = Atomic(0)
        let task = Task {
            await loop.run {
                worked.add(1, ordering: .relaxed)
                ran.yield()
            }
        }
        defer { task.cancel() }
        var iterator = runs.makeAsyncIterator()
        await iterator.next()
        await clock.sleepers(atLeast: 1)
        #expect(try #require(clock.farthestDeadline) <= .seconds(1))
        await clock.advance(by: .seconds(59))
        #expect(await comesToHold { clock.sleeperCount == 1 }, "still pausing after 59 s")
        #expect(worked.load(ordering: .relaxed) == 1, "the work ran once, before the pause")
        await clock.advance(by: .seconds(1))
        await iterator.next()  // the interval ran out: the work runs again
        await clock.sleepers(atLeast: 1)
        loop.wake()
        await iterator.next()  // woken: at once
    }
}
