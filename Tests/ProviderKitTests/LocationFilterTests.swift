import Foundation
import Testing
import EnRouteModels
import ProviderKit

@Suite struct LocationFilterTests {
    static let start = Date(timeIntervalSince1970: 1_792_520_000)

    static func fix(
        lat: Double = 60.1699, lng: Double = 24.9384, accuracy: Double = 5, at seconds: Double
    ) -> LocationFix {
        LocationFix(
            lat: lat, lng: lng, heading: 0, speed: 10, accuracy: accuracy, recordedAt: start.addingTimeInterval(seconds)
        )
    }

    @Test func keepsTheFirstAccurateReading() {
        #expect(LocationFilter().judge(Self.fix(at: 0), after: nil) == .kept)
    }

    @Test(arguments: [51.0, 500, -1, .infinity, .nan])
    func dropsReadingsWithPoorOrMeaninglessAccuracy(accuracy: Double) {
        #expect(LocationFilter().judge(Self.fix(accuracy: accuracy, at: 0), after: nil) == .inaccurate)
    }

    @Test func dropsAReadingAtOrBeforeTheLastKeptTime() {
        let last = Self.fix(at: 10)
        #expect(LocationFilter().judge(Self.fix(lat: 60.18, at: 10), after: last) == .duplicate)
        #expect(LocationFilter().judge(Self.fix(lat: 60.18, at: 9), after: last) == .duplicate)
    }

    /// 0.0001° of latitude is about 11 m.
    @Test func keepsAReadingFarEnoughAwayHoweverSoon() {
        #expect(LocationFilter().judge(Self.fix(lat: 60.1700, at: 1), after: Self.fix(at: 0)) == .kept)
    }

    @Test func dropsAReadingTooCloseAndTooSoon() {
        #expect(LocationFilter().judge(Self.fix(lat: 60.16991, at: 1), after: Self.fix(at: 0)) == .tooClose)
    }

    @Test func keepsAStillProviderReportingAfterTheMinimumInterval() {
        #expect(LocationFilter().judge(Self.fix(at: 5), after: Self.fix(at: 0)) == .kept)
    }
}
