public import Foundation
public import EnRouteModels

/// The on-device filter in front of the point buffer.
///
/// Pure: it compares a reading with the last kept fix. It keeps a reading when it is accurate enough, newer than
/// the last kept one, and either far enough away or old enough since it that a still provider still reports in.
public struct LocationFilter: Sendable, Equatable {
    /// Why a reading was kept or dropped.
    public enum Verdict: Sendable, Equatable {
        case kept
        /// Horizontal accuracy worse than `maximumAccuracy`.
        case inaccurate
        /// Same time as, or older than, the last kept fix.
        case duplicate
        /// Closer than `minimumDistance` and sooner than `minimumInterval` after the last kept fix.
        case tooClose
    }

    /// Worst horizontal accuracy kept, in metres (the server drops anything worse than 50 m).
    public var maximumAccuracy: Double
    /// A reading this far from the last kept fix is kept however soon it comes, in metres.
    public var minimumDistance: Double
    /// A reading this long after the last kept fix is kept even if the provider has not moved.
    public var minimumInterval: TimeInterval

    /// A filter with these limits; the defaults suit a car in a city.
    public init(maximumAccuracy: Double = 50, minimumDistance: Double = 10, minimumInterval: TimeInterval = 5) {
        self.maximumAccuracy = maximumAccuracy
        self.minimumDistance = minimumDistance
        self.minimumInterval = minimumInterval
    }

    /// The verdict on `reading` given the last kept fix.
    public func judge(_ reading: LocationFix, after last: LocationFix?) -> Verdict {
        guard reading.accuracy.isFinite, reading.accuracy >= 0, reading.accuracy <= maximumAccuracy,
            reading.coordinate.isValid
        else { return .inaccurate }
        guard let last else { return .kept }
        guard reading.recordedAt > last.recordedAt else { return .duplicate }
        let moved = reading.coordinate.distance(to: last.coordinate)
        let waited = reading.recordedAt.timeIntervalSince(last.recordedAt)
        return moved >= minimumDistance || waited >= minimumInterval ? .kept : .tooClose
    }
}
