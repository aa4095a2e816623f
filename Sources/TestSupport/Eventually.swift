public import Testing

/// Lets other tasks run until `condition` holds, yielding between looks and never sleeping; records an issue
/// naming `what` and stops the test (throws) if it has not held after `yields` turns. Counting turns rather
/// than seconds makes the bound grow with the machine's load: every turn is a chance for the tasks that bring
/// the condition about to run. For effects on threads outside Swift concurrency (a live server's, another
/// process's), pass `within`: the bound is then that much wall time, read only as a guard against a hung test,
/// never to decide an outcome.
///
/// Runs on the caller's actor (`isolation`), so a main-actor test can look at main-actor state.
public func eventually(
    _ what: Comment = "condition", yields: Int = 200_000, within limit: Duration? = nil,
    isolation: isolated (any Actor)? = #isolation, sourceLocation: SourceLocation = #_sourceLocation,
    _ condition: () async throws -> Bool
) async throws {
    let held: Bool
    if let limit {
        let deadline = ContinuousClock.now.advanced(by: limit)
        var now = try await condition()
        while !now, ContinuousClock.now < deadline {
            await Task.yield()
            now = try await condition()
        }
        held = now
    } else {
        held = try await comesToHold(within: yields, condition)
    }
    try #require(held, "never happened: \(what)", sourceLocation: sourceLocation)
}

/// Whether `condition` comes to hold within `yields` turns of letting other tasks run (never sleeping):
/// `eventually` without the failure, for a probe whose answer may rightly be no.
public func comesToHold(
    within yields: Int = 200_000, isolation: isolated (any Actor)? = #isolation,
    _ condition: () async throws -> Bool
) async rethrows -> Bool {
    var turns = 0
    while try await !condition() {
        guard turns < yields else { return false }
        await Task.yield()
        turns += 1
    }
    return true
}

/// Moves `clock` forward `step` at a time until `condition` holds, letting other tasks run after each step
/// (up to `yieldsPerStep` looks) and never sleeping; records an issue naming `what` and stops the test (throws)
/// if it has not held after `steps` steps. With `sleepers`, each step waits until that many tasks are asleep on
/// the clock first, so a timer loop is advanced only once it has gone back to sleep.
public func eventually(
    _ what: Comment = "condition", advancing clock: ManualClock, by step: Duration, steps: Int = 1_000,
    sleepers: Int = 0, yieldsPerStep: Int = 1_000,
    isolation: isolated (any Actor)? = #isolation, sourceLocation: SourceLocation = #_sourceLocation,
    _ condition: () async throws -> Bool
) async throws {
    var held = try await condition()
    var taken = 0
    while !held, taken < steps {
        if sleepers > 0 { await clock.sleepers(atLeast: sleepers) }
        await clock.advance(by: step)
        taken += 1
        for _ in 0..<yieldsPerStep {
            held = try await condition()
            if held { break }
            await Task.yield()
        }
    }
    try #require(held, "never happened after \(taken) steps of \(step): \(what)", sourceLocation: sourceLocation)
}
