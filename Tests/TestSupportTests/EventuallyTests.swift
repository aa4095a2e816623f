import Synchronization
import Testing
import TestSupport

/// The one `eventually` helper: it waits by yielding or by moving the test clock, and it fails a test whose
/// condition never holds instead of hanging it.
@Suite(.timeLimit(.minutes(1))) struct EventuallyTests {
    @Test func returnsOnceAnotherTaskHasMadeTheConditionTrue() async throws {
        let done = Mutex(false)
        let other = Task {
            for _ in 0..<100 { await Task.yield() }
            done.withLock { $0 = true }
        }
        try await eventually("the other task has run") { done.withLock { $0 } }
        await other.value
    }

    @Test func aConditionThatNeverHoldsFailsTheTestNamingWhatWasAwaited() async throws {
        try await withKnownIssue {
            try await eventually("a thing that never happens", within: .milliseconds(20)) { false }
        } matching: { (issue: Issue) -> Bool in
            issue.comments.contains { (comment: Comment) in comment.rawValue.contains("a thing that never happens") }
        }
    }

    @Test func withoutAWallLimitItGivesUpAfterItsTurns() async {
        var looks = 0
        await withKnownIssue {
            try await eventually("never", yields: 50) {
                looks += 1; return false
            }
        }
        #expect(looks == 51, "one look before the first turn and one after each")
    }

    @Test func advancingTheClockWakesATimerAndStopsAtTheFirstStepThatSatisfies() async throws {
        let clock = ManualClock()
        let fired = Mutex(false)
        let timer = Task {
            try await clock.sleep(for: .seconds(60))
            fired.withLock { $0 = true }
        }
        try await eventually("the timer fired", advancing: clock, by: .seconds(15), sleepers: 1) {
            fired.withLock { $0 }
        }
        #expect(clock.now.offset == .seconds(60), "four steps of 15 s, not more")
        try await timer.value
    }

    @Test func advancingGivesUpAfterItsStepsWithAnIssue() async {
        let clock = ManualClock()
        await withKnownIssue {
            try await eventually("nothing", advancing: clock, by: .seconds(1), steps: 3, yieldsPerStep: 1) { false }
        }
        #expect(clock.now.offset == .seconds(3))
    }

    @MainActor @Test func readsMainActorStateFromAMainActorTest() async throws {
        final class Model { var value = 0 }
        let model = Model()
        Task { @MainActor in model.value = 1 }
        try await eventually("the main-actor task ran") { model.value == 1 }
    }
}
