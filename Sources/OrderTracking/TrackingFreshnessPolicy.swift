public import Foundation

/// A pure rule for what the user may be told about old data and lateness.
///
/// Times are worded in the injected locale and time zone, so tests and screens agree.
public struct TrackingFreshnessPolicy: Sendable {
    /// A fix younger than this is shown as live.
    public var liveFor: TimeInterval = 20
    /// A fix younger than this is shown dimmed with its age; older ones are hidden.
    public var staleFor: TimeInterval = 120
    /// A snapshot at least this old says "ETA updating" instead of its window.
    public var etaTrustedFor: TimeInterval = 120

    private let timeStyle: Date.FormatStyle

    /// A policy that words times for `locale` in `timeZone`; the order tracker's `TrackingFreshnessPolicy()` uses the
    /// device's.
    public init(locale: Locale = .autoupdatingCurrent, timeZone: TimeZone = .autoupdatingCurrent) {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        timeStyle = Date.FormatStyle(
            date: .omitted, time: .shortened, locale: locale, calendar: calendar, timeZone: timeZone)
    }

    /// < 20 s live · < 2 min stale with its age · older hidden
    public func pin(for fix: RiderFix?, now: Date) -> RiderPin {
        guard let fix else { return .hidden }
        // A fix from a phone whose clock runs ahead counts as brand new, never as a negative age.
        let age = max(0, now.timeIntervalSince(fix.recordedAt))
        if age < liveFor { return .live(fix) }
        if age < staleFor { return .stale(fix, label: Self.ageLabel(age)) }
        return .hidden
    }

    /// a range · running late after the latest · updating when old
    public func eta(_ eta: ClosedRange<Date>?, generatedAt: Date, now: Date) -> ETAWording {
        if now.timeIntervalSince(generatedAt) >= etaTrustedFor { return .updating }
        guard let eta else { return .unknown }
        if now > eta.upperBound { return .runningLate }
        // Never a single minute, and never a start long behind us: at most `liveFor` back, since a provider whose
        // last fix is still shown live may have arrived since it was taken (a window starting after that would
        // already be wrong).
        let earliest = Self.floorToMinute(max(eta.lowerBound, now.addingTimeInterval(-liveFor)))
        var latest = Self.ceilToMinute(eta.upperBound)
        if latest <= earliest { latest = earliest.addingTimeInterval(60) }
        return .window(earliest...latest)
    }

    /// The first moment after `now` at which the pin or the ETA changes wording by time alone (live to dimmed, dimmed
    /// to hidden, the window to "Running a little late" or "ETA updating"); nil when none is ahead.
    public func nextChange(fix: RiderFix?, eta: ClosedRange<Date>?, generatedAt: Date, now: Date) -> Date? {
        var moments = [generatedAt.addingTimeInterval(etaTrustedFor)]
        if let fix {
            moments += [fix.recordedAt.addingTimeInterval(liveFor), fix.recordedAt.addingTimeInterval(staleFor)]
        }
        // "Running a little late" starts just after the latest end (`now > upperBound`).
        if let eta { moments.append(eta.upperBound.addingTimeInterval(Self.justAfter)) }
        return moments.filter { $0 > now }.min()
    }

    /// How long to wait from `now` until `nextChange(...)`, to the nearest millisecond and at least one (waking a hair
    /// early only means one more short wait); nil when nothing will change on its own.
    public func untilNextChange(fix: RiderFix?, eta: ClosedRange<Date>?, generatedAt: Date, now: Date) -> Duration? {
        nextChange(fix: fix, eta: eta, generatedAt: generatedAt, now: now)
            .map { .milliseconds(max(1, Int64(($0.timeIntervalSince(now) * 1000).rounded()))) }
    }

    /// How far past an instant counts as after it.
    static let justAfter: TimeInterval = 0.001

    /// "Arriving 18:42–18:46" · "Running a little late" · "ETA updating" · "Arrival time to follow".
    public func text(for wording: ETAWording) -> String {
        switch wording {
        case .window(let window):
            "Arriving \(window.lowerBound.formatted(timeStyle))–\(window.upperBound.formatted(timeStyle))"
        case .runningLate: "Running a little late"
        case .updating: "ETA updating"
        case .unknown: "Arrival time to follow"
        }
    }

    /// "Updated 40 s ago" under a minute, "Updated 1 min ago" after.
    static func ageLabel(_ age: TimeInterval) -> String {
        let seconds = Int(age.rounded(.down))
        return seconds < 60 ? "Updated \(seconds) s ago" : "Updated \(seconds / 60) min ago"
    }

    private static func floorToMinute(_ date: Date) -> Date {
        Date(timeIntervalSince1970: (date.timeIntervalSince1970 / 60).rounded(.down) * 60)
    }

    private static func ceilToMinute(_ date: Date) -> Date {
        Date(timeIntervalSince1970: (date.timeIntervalSince1970 / 60).rounded(.up) * 60)
    }
}
