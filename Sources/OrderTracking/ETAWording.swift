public import Foundation

/// What the user may be told about arrival; `TrackingFreshnessPolicy.text(for:)` words it.
public enum ETAWording: Equatable, Sendable {
    /// An arrival window on whole minutes, at least one minute wide.
    case window(ClosedRange<Date>)
    /// Past the latest time the server gave.
    case runningLate
    /// The snapshot is too old to vouch for its ETA.
    case updating
    /// The server has no ETA yet.
    case unknown
}
