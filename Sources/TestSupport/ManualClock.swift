public import Foundation
public import ClientKit
import Synchronization

/// A clock that moves only when a test advances it; `dates` reads the same time as wall-clock dates.
///
/// Sleepers wake in deadline order when `advance(by:)` passes their deadline. `sleepers(atLeast:)`
/// lets a test wait until the code under test has reached its sleep, without sleeping itself.
public final class ManualClock: Clock, @unchecked Sendable {
    public struct Instant: InstantProtocol, Sendable {
        public var offset: Duration
        public init(offset: Duration) { self.offset = offset }
        public func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        public func duration(to other: Instant) -> Duration { other.offset - offset }
        public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private struct Sleeper {
        let id: UInt64
        let deadline: Instant
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now = Instant(offset: .zero)
        var sleepers: [Sleeper] = []
        var nextID: UInt64 = 0
        var waiters: [(Int, CheckedContinuation<Void, Never>)] = []
    }

    private let state = Mutex(State())
    private let origin: Date

    /// A clock whose `now()` starts at `start`.
    public init(start: Date = Date(timeIntervalSince1970: 1_792_520_000)) { self.origin = start }

    public var now: Instant { state.withLock { $0.now } }
    public var minimumResolution: Duration { .zero }

    /// The wall-clock time: the start date plus everything advanced so far.
    public var date: Date {
        let offset = state.withLock { $0.now.offset }
        let (s, atto) = offset.components
        return origin.addingTimeInterval(Double(s) + Double(atto) / 1e18)
    }

    /// This clock as a `DateProvider`, for logic that wants dates.
    public var dates: any DateProvider { ManualDates(clock: self) }

    /// How many tasks are asleep on this clock right now.
    public var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    /// The farthest deadline any sleeper has armed, as a duration from now; nil when nobody sleeps.
    public var farthestDeadline: Duration? {
        state.withLock { s in s.sleepers.map(\.deadline).max().map { s.now.duration(to: $0) } }
    }

    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        let id = state.withLock { s -> UInt64 in
            s.nextID += 1; return s.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (cont: CheckedContinuation<Void, any Error>) in
                let resumeNow: Bool = state.withLock { s in
                    if Task.isCancelled || deadline <= s.now { return true }
                    s.sleepers.append(Sleeper(id: id, deadline: deadline, continuation: cont))
                    let count = s.sleepers.count
                    let ready = s.waiters.filter { $0.0 <= count }
                    s.waiters.removeAll { $0.0 <= count }
                    for waiter in ready { waiter.1.resume() }
                    return false
                }
                if resumeNow { cont.resume() }
            }
        } onCancel: {
            let sleeper: Sleeper? = state.withLock { s in
                guard let i = s.sleepers.firstIndex(where: { $0.id == id }) else { return nil }
                return s.sleepers.remove(at: i)
            }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
        try Task.checkCancellation()
    }

    /// Moves time forward, waking every sleeper whose deadline has passed, earliest first.
    public func advance(by duration: Duration) async {
        let target = state.withLock { $0.now.advanced(by: duration) }
        while true {
            let due: Sleeper? = state.withLock { s in
                guard let i = s.sleepers.indices.min(by: { s.sleepers[$0].deadline < s.sleepers[$1].deadline }),
                    s.sleepers[i].deadline <= target
                else {
                    s.now = target
                    return nil
                }
                let sleeper = s.sleepers.remove(at: i)
                if sleeper.deadline > s.now { s.now = sleeper.deadline }
                return sleeper
            }
            guard let due else { break }
            due.continuation.resume()
            // Let the woken task run up to its next suspension before waking later deadlines.
            for _ in 0..<10 { await Task.yield() }
        }
    }

    /// Suspends until at least `count` tasks are asleep on this clock.
    public func sleepers(atLeast count: Int) async {
        await withCheckedContinuation { (cont: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { s -> Bool in
                if s.sleepers.count >= count { return true }
                s.waiters.append((count, cont))
                return false
            }
            if ready { cont.resume() }
        }
    }
}

private struct ManualDates: DateProvider {
    let clock: ManualClock
    func now() -> Date { clock.date }
}
