import Foundation

/// Speeds observed on road edges from matched drives, smoothed per edge and combined with a time-of-day table.
///
/// Each accepted traversal is a sample of the edge's travel time. An edge's observed time is the samples' mean
/// weighted by `0.5^(age / halfLifeSeconds)`, so recent traffic counts most. When durations are asked for, the
/// observed time is blended with the table's by weight: the samples' decayed weight against `profileWeight`
/// (the table counts as that many samples), so an edge's time moves toward what was seen while the samples are
/// fresh and drifts back to the table as they age; once the newest sample is older than `maxAgeSeconds` the
/// edge is the table's alone. Implausible samples are rejected: faster than `maxSpeedFactor` × free-flow, or
/// slower than `minimumSpeedKmh` (a car stopped at a light has not traversed the edge).
///
/// Pure: every time is a parameter, in seconds on the caller's clock.
public struct ObservedSpeeds: Sendable {
    /// How samples are weighed, aged and filtered.
    public struct Options: Sendable {
        /// A sample's weight halves every this many seconds.
        public var halfLifeSeconds: Double
        /// An edge whose newest sample is older than this is back to the table.
        public var maxAgeSeconds: Double
        /// The time-of-day table's weight in the blend, in samples.
        public var profileWeight: Double
        /// Samples faster than this multiple of the edge's free-flow speed are rejected.
        public var maxSpeedFactor: Double
        /// Samples slower than this (km/h) are rejected.
        public var minimumSpeedKmh: Double

        /// Options with the given values.
        public init(
            halfLifeSeconds: Double = 600, maxAgeSeconds: Double = 1800, profileWeight: Double = 1,
            maxSpeedFactor: Double = 1.5, minimumSpeedKmh: Double = 1
        ) {
            self.halfLifeSeconds = halfLifeSeconds
            self.maxAgeSeconds = maxAgeSeconds
            self.profileWeight = profileWeight
            self.maxSpeedFactor = maxSpeedFactor
            self.minimumSpeedKmh = minimumSpeedKmh
        }
    }

    /// What became of one traversal.
    public enum Outcome: Sendable, Hashable {
        /// Taken into the edge's speed.
        case accepted
        /// Faster than `maxSpeedFactor` × free-flow: a bad match or a bad clock.
        case tooFast
        /// Slower than `minimumSpeedKmh`: stopped, not travelling.
        case tooSlow
        /// No such edge, a zero-length edge, or a time that is not positive.
        case invalid
    }

    /// What is known of one edge at a moment.
    public struct EdgeSpeed: Sendable, Hashable {
        /// The smoothed observed speed in metres per second.
        public var metersPerSecond: Double
        /// The smoothed observed travel time of the whole edge in seconds.
        public var seconds: Double
        /// Accepted samples since the edge was last stale.
        public var sampleCount: Int
        /// The samples' weight now, after decay (in samples).
        public var weight: Double
        /// When the newest sample was taken.
        public var lastObservedAt: Double
    }

    private struct Entry {
        /// Σ weightᵢ · secondsᵢ and Σ weightᵢ, both decayed to `updatedAt`.
        var weightedSeconds: Double
        var weight: Double
        var updatedAt: Double
        var lastObservedAt: Double
        var sampleCount: Int
    }

    /// The options in force.
    public let options: Options
    private let lengths: [Double]
    private let freeFlowSeconds: [Double]
    private var entries: [Int32: Entry] = [:]

    /// No observations yet, for the edges of `network` (whose durations are free-flow).
    public init(network: RoadNetwork, options: Options = Options()) {
        self.options = options
        lengths = network.edgeLengthMeters
        freeFlowSeconds = network.edgeDurationSeconds
    }

    /// The number of edges with an observation (stale ones included until `prune`).
    public var observedEdgeCount: Int { entries.count }

    /// Takes in one traversal of `edge` lasting `seconds`, observed at `time`.
    @discardableResult
    public mutating func record(edge: Int32, seconds: Double, at time: Double) -> Outcome {
        guard edge >= 0, Int(edge) < lengths.count, seconds > 0, seconds.isFinite, lengths[Int(edge)] > 0 else {
            return .invalid
        }
        let speed = lengths[Int(edge)] / seconds
        if freeFlowSeconds[Int(edge)] > 0,
            speed > options.maxSpeedFactor * lengths[Int(edge)] / freeFlowSeconds[Int(edge)]
        {
            return .tooFast
        }
        if speed < options.minimumSpeedKmh / 3.6 { return .tooSlow }

        guard var entry = entries[edge], time - entry.lastObservedAt <= options.maxAgeSeconds else {
            entries[edge] = Entry(
                weightedSeconds: seconds, weight: 1, updatedAt: time, lastObservedAt: time, sampleCount: 1)
            return .accepted
        }
        if time >= entry.updatedAt {
            let decay = decayFactor(time - entry.updatedAt)
            entry.weightedSeconds = entry.weightedSeconds * decay + seconds
            entry.weight = entry.weight * decay + 1
            entry.updatedAt = time
        } else {
            // A late sample counts as old as it is.
            let weight = decayFactor(entry.updatedAt - time)
            entry.weightedSeconds += weight * seconds
            entry.weight += weight
        }
        entry.lastObservedAt = max(entry.lastObservedAt, time)
        entry.sampleCount += 1
        entries[edge] = entry
        return .accepted
    }

    /// Takes in every fully driven edge of a match, each observed when it was left; returns how many were accepted.
    @discardableResult
    public mutating func record(_ match: MapMatch) -> (accepted: Int, rejected: Int) {
        var accepted = 0, rejected = 0
        for traversal in match.traversals {
            if record(edge: traversal.edge, seconds: traversal.seconds, at: traversal.leftAt) == .accepted {
                accepted += 1
            } else {
                rejected += 1
            }
        }
        return (accepted, rejected)
    }

    /// What is known of `edge` at `now`, or nil when it has no fresh observation.
    public func speed(ofEdge edge: Int32, now: Double) -> EdgeSpeed? {
        guard let entry = entries[edge], now - entry.lastObservedAt <= options.maxAgeSeconds else { return nil }
        let seconds = entry.weightedSeconds / entry.weight
        return EdgeSpeed(
            metersPerSecond: lengths[Int(edge)] / seconds, seconds: seconds, sampleCount: entry.sampleCount,
            weight: entry.weight * decayFactor(max(0, now - entry.updatedAt)), lastObservedAt: entry.lastObservedAt)
    }

    /// Forgets every edge whose newest sample is older than `maxAgeSeconds` at `now`.
    public mutating func prune(now: Double) {
        entries = entries.filter { now - $0.value.lastObservedAt <= options.maxAgeSeconds }
    }

    /// Each edge's duration at `now`: the table's at `hourOfWeek`, blended with the fresh observations where there are
    /// any.
    public func durations(of network: RoadNetwork, profile: TimeOfDaySpeeds, hourOfWeek: Int, now: Double) -> [Double] {
        precondition(network.edgeCount == lengths.count, "the network must be the one the observations are for")
        var durations = profile.durations(of: network, hourOfWeek: hourOfWeek)
        for edge in entries.keys {
            guard let observed = speed(ofEdge: edge, now: now) else { continue }
            let table = durations[Int(edge)]
            durations[Int(edge)] =
                (observed.weight * observed.seconds + options.profileWeight * table)
                / (observed.weight + options.profileWeight)
        }
        return durations
    }

    private func decayFactor(_ seconds: Double) -> Double {
        exp2(-seconds / options.halfLifeSeconds)
    }
}
