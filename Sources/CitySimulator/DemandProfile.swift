public import Foundation

/// How demand varies over a run: the `--demand` rates times a factor that depends on simulated time only. Steady, or
/// one rush hour during which both rates are multiplied. Arrivals follow it as a non-homogeneous Poisson process whose
/// rate steps at the rush hour's boundaries.
public struct DemandProfile: Sendable, Equatable {
    /// A stretch of the run, in simulated seconds since its start, during which demand is `factor` times the base.
    public struct RushHour: Sendable, Equatable {
        public var fromSecond: Double
        public var toSecond: Double
        public var factor: Double
        /// A rush hour from `fromSecond` to `toSecond` (later) at `factor` (above 0).
        public init(fromSecond: Double, toSecond: Double, factor: Double) {
            self.fromSecond = fromSecond; self.toSecond = toSecond; self.factor = factor
        }
    }

    public var rushHour: RushHour?

    /// A profile with `rushHour`, or steady.
    public init(rushHour: RushHour? = nil) { self.rushHour = rushHour }

    /// The same rates from start to end.
    public static let steady = DemandProfile()

    /// The factor on the base rates at `second`: the rush hour's inside [from, to), 1 elsewhere.
    public func factor(at second: Double) -> Double {
        guard let rush = rushHour, second >= rush.fromSecond, second < rush.toSecond else { return 1 }
        return rush.factor
    }

    /// The next moment after `second` at which the factor changes; nil when it never does again.
    func nextChange(after second: Double) -> Double? {
        guard let rush = rushHour else { return nil }
        return [rush.fromSecond, rush.toSecond].first { $0 > second }
    }

    /// The next arrival after `second` of a process whose rate is `perSecond` times the factor: `work` is a draw of
    /// an exponential with mean 1, spent at the rate in force until it is used up (the rate steps at each change).
    /// With a steady profile this is `second + work / perSecond`, the homogeneous process's wait.
    public func nextArrival(after second: Double, work: Double, perSecond: Double) -> Double {
        guard perSecond > 0 else { return .infinity }
        var now = second, left = work
        while true {
            let rate = perSecond * factor(at: now)
            let end = nextChange(after: now) ?? .infinity
            let needed = left / rate
            if now + needed <= end { return now + needed }
            left -= (end - now) * rate
            now = end
        }
    }

}
