import Foundation
import Testing
@testable import OrderTracking

@Suite struct TrackingFreshnessPolicyTests {
    static let now = Fixture.at(18, 38)

    @Test(arguments: [
        (0.0, "live"), (19.9, "live"), (-30, "live"),
        (20, "Updated 20 s ago"), (40, "Updated 40 s ago"), (59.9, "Updated 59 s ago"),
        (60, "Updated 1 min ago"), (119, "Updated 1 min ago"),
        (120, "hidden"), (3600, "hidden"),
    ])
    func pinByAge(age: TimeInterval, expected: String) {
        let fix = RiderFix(coordinate: Fixture.home, recordedAt: Self.now.addingTimeInterval(-age))
        let pin = TrackingFreshnessPolicy.utc.pin(for: fix, now: Self.now)
        switch pin {
        case .live(let shown): #expect(expected == "live"); #expect(shown == fix)
        case .stale(let shown, let label): #expect(label == expected); #expect(shown == fix)
        case .hidden: #expect(expected == "hidden")
        }
    }

    /// The next time-driven change is the nearest of: the pin dimming, the pin hiding, the ETA going late, the ETA
    /// going stale.
    @Test func theNextChangeIsTheNearestWordingBoundary() {
        let policy = TrackingFreshnessPolicy.utc, now = Self.now
        let fix = RiderFix(coordinate: Fixture.home, recordedAt: now.addingTimeInterval(-5))
        #expect(policy.nextChange(fix: fix, eta: nil, generatedAt: now, now: now) == now.addingTimeInterval(15))
        let dimmed = RiderFix(coordinate: Fixture.home, recordedAt: now.addingTimeInterval(-30))
        #expect(policy.nextChange(fix: dimmed, eta: nil, generatedAt: now, now: now) == now.addingTimeInterval(90))
        let window = now.addingTimeInterval(-60)...now.addingTimeInterval(7)
        #expect(
            policy.nextChange(fix: dimmed, eta: window, generatedAt: now, now: now) == now.addingTimeInterval(7.001))
        #expect(
            policy.nextChange(fix: nil, eta: nil, generatedAt: now.addingTimeInterval(-100), now: now)
                == now.addingTimeInterval(20))
        #expect(policy.nextChange(fix: nil, eta: nil, generatedAt: now.addingTimeInterval(-200), now: now) == nil)
        // As a wait: to the millisecond, never zero.
        #expect(policy.untilNextChange(fix: dimmed, eta: window, generatedAt: now, now: now) == .milliseconds(7_001))
        let due = now.addingTimeInterval(-60)...now.addingTimeInterval(-0.0008)
        #expect(policy.untilNextChange(fix: nil, eta: due, generatedAt: now, now: now) == .milliseconds(1))
    }

    @Test func noFixMeansNoPin() {
        #expect(TrackingFreshnessPolicy.utc.pin(for: nil, now: Self.now) == .hidden)
    }

    struct ETACase: Sendable, CustomTestStringConvertible {
        let now: Date
        let eta: ClosedRange<Date>?
        var snapshotAge: TimeInterval = 10
        let expected: String
        var testDescription: String { expected }
    }

    @Test(arguments: [
        ETACase(now: at(18, 38), eta: at(18, 42)...at(18, 46), expected: "Arriving 18:42–18:46"),
        ETACase(now: at(18, 38), eta: at(18, 42, 10)...at(18, 45, 50), expected: "Arriving 18:42–18:46"),
        // Never a single minute.
        ETACase(now: at(18, 38), eta: at(18, 42)...at(18, 42), expected: "Arriving 18:42–18:43"),
        // Never a start long behind us: at most 20 s (the provider may have arrived since a still-live fix).
        ETACase(now: at(18, 44, 30), eta: at(18, 42)...at(18, 46), expected: "Arriving 18:44–18:46"),
        ETACase(now: at(18, 44, 15), eta: at(18, 42)...at(18, 46), expected: "Arriving 18:43–18:46"),
        ETACase(now: at(18, 46), eta: at(18, 42)...at(18, 46), expected: "Arriving 18:45–18:46"),
        ETACase(now: at(18, 46, 1), eta: at(18, 42)...at(18, 46), expected: "Running a little late"),
        ETACase(now: at(19, 30), eta: at(18, 42)...at(18, 46), expected: "Running a little late"),
        ETACase(now: at(18, 38), eta: at(18, 42)...at(18, 46), snapshotAge: 119, expected: "Arriving 18:42–18:46"),
        ETACase(now: at(18, 38), eta: at(18, 42)...at(18, 46), snapshotAge: 120, expected: "ETA updating"),
        ETACase(now: at(19, 30), eta: at(18, 42)...at(18, 46), snapshotAge: 600, expected: "ETA updating"),
        ETACase(now: at(18, 38), eta: nil, expected: "Arrival time to follow"),
    ])
    func etaWording(_ c: ETACase) {
        let policy = TrackingFreshnessPolicy.utc
        let text = policy.text(
            for: policy.eta(c.eta, generatedAt: c.now.addingTimeInterval(-c.snapshotAge), now: c.now))
        #expect(text == c.expected)
        #expect(!text.contains("0 min") && !text.contains("-"))
    }

    @Test(arguments: [
        ("de_DE", "Europe/Berlin", "Arriving 20:42–20:46"),
        ("en_GB", "Europe/London", "Arriving 19:42–19:46"),
        ("en_US", "America/New_York", "Arriving 2:42\u{202F}PM–2:46\u{202F}PM"),
    ])
    func wordsTimesInTheInjectedLocaleAndTimeZone(locale: String, zone: String, expected: String) throws {
        let policy = TrackingFreshnessPolicy(
            locale: Locale(identifier: locale), timeZone: try #require(TimeZone(identifier: zone)))
        let now = Fixture.at(18, 38)
        #expect(
            policy.text(for: policy.eta(Fixture.at(18, 42)...Fixture.at(18, 46), generatedAt: now, now: now))
                == expected)
    }

    private static func at(_ hh: Int, _ mm: Int, _ ss: Int = 0) -> Date { Fixture.at(hh, mm, ss) }
}
