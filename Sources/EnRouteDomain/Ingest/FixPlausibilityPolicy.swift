public import Foundation
public import EnRouteModels

/// Why a reported fix was not kept; the `reason` label of `enroute_location_fixes_dropped_total`.
public enum FixDropReason: String, Sendable, CaseIterable {
    /// Accuracy worse than the limit.
    case inaccurate
    /// Recorded in the future, beyond the allowed clock skew.
    case future
    /// The same time and place as the last kept fix (a resend).
    case duplicate
    /// Not newer than the last kept fix.
    case stale
    /// Faster than a vehicle can go, by reported speed or by distance over time.
    case tooFast
    /// A jump too large for the moment between two fixes.
    case teleport
}

/// The server's checks on positions from an untrusted client: pure.
///
/// Each fix is judged against the last kept fix of the same provider. Over gaps of `teleportWindow`
/// or more the implied speed is checked; over shorter gaps timing jitter makes speed meaningless,
/// so the jump itself is bounded instead. A last kept fix older than `continuity` is no reference:
/// after a long gap the provider may honestly be anywhere.
public struct FixPlausibilityPolicy: Sendable {
    /// Worst accepted horizontal accuracy, metres.
    public var maxAccuracy: Double = 50
    /// Fastest plausible speed, metres per second (252 km/h).
    public var maxSpeed: Double = 70
    /// Gaps shorter than this are judged by distance, not speed.
    public var teleportWindow: TimeInterval = 2
    /// Largest plausible jump within `teleportWindow`, metres.
    public var teleportDistance: Double = 200
    /// How far ahead of the server's clock a fix may be recorded.
    public var futureSkew: TimeInterval = 30
    /// The last kept fix is a reference for this long.
    public var continuity: TimeInterval = 120

    public init() {}

    /// Keep, or the reason to drop, `fix` after `last` (the last kept fix, if any) at server time `now`.
    public func judge(_ fix: LocationFix, after last: LocationFix?, now: Date) -> FixDropReason? {
        if fix.recordedAt > now.addingTimeInterval(futureSkew) { return .future }
        if !(fix.accuracy <= maxAccuracy) { return .inaccurate }
        if fix.speed.isFinite, fix.speed > maxSpeed { return .tooFast }
        guard let last else { return nil }
        if fix.recordedAt == last.recordedAt, fix.lat == last.lat, fix.lng == last.lng { return .duplicate }
        if fix.recordedAt <= last.recordedAt { return .stale }
        let gap = fix.recordedAt.timeIntervalSince(last.recordedAt)
        guard gap <= continuity else { return nil }
        let distance = StraightLineEstimator.distance(last.coordinate, fix.coordinate)
        if gap < teleportWindow { return distance > teleportDistance ? .teleport : nil }
        return distance / gap > maxSpeed ? .tooFast : nil
    }
}
