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

extension ETAWording {
    /// "1 stop before yours", "2 stops before yours": the stops a courier makes for other orders first; nil for none.
    public static func stopsBefore(_ count: Int?) -> String? {
        guard let count, count > 0 else { return nil }
        return count == 1 ? "1 stop before yours" : "\(count) stops before yours"
    }
}
