public import Foundation
public import ClientKit

/// The run's one time: `speedup` simulated seconds per wall second, from `start`. Sleeps last 1/speedup of what
/// they ask in wall time. Everything in the simulator (and an embedded server) reads and sleeps on it.
public final class SimulatedClock: Clock, Sendable {
    /// Simulated time since the start.
    public struct Instant: InstantProtocol, Sendable {
        public var offset: Duration
        public init(offset: Duration) { self.offset = offset }
        public func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        public func duration(to other: Instant) -> Duration { other.offset - offset }
        public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    /// Simulated seconds per wall second.
    public let speedup: Double
    /// The simulated date at the start.
    public let start: Date
    private let base: ContinuousClock
    private let origin: ContinuousClock.Instant

    /// A clock starting now at the simulated date `start`, running `speedup` times faster than `base`.
    public init(speedup: Double, start: Date, base: ContinuousClock = ContinuousClock()) {
        precondition(speedup > 0)
        self.speedup = speedup; self.start = start; self.base = base; self.origin = base.now
    }

    public var now: Instant { Instant(offset: (base.now - origin) * speedup) }
    public var minimumResolution: Duration { .milliseconds(1) }

    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        let wait = now.duration(to: deadline)
        guard wait > .zero else { try Task.checkCancellation(); return }
        try await base.sleep(for: wait / speedup)
    }

    /// The simulated date now.
    public var date: Date { Self.date(start, plus: now.offset) }

    /// The clock as a `DateProvider`.
    public var dates: any DateProvider { SimulatedDates(clock: self) }

    static func date(_ start: Date, plus offset: Duration) -> Date {
        let (s, atto) = offset.components
        return start.addingTimeInterval(Double(s) + Double(atto) / 1e18)
    }
}

struct SimulatedDates: DateProvider {
    let clock: SimulatedClock
    func now() -> Date { clock.date }
}
