import Foundation
import Testing
import CitySimulator

/// The demand's rate over simulated time and the arrivals it makes: a Poisson process whose rate steps at the rush
/// hour's boundaries.
@Suite struct DemandProfileTests {
    static let rush = DemandProfile(rushHour: .init(fromSecond: 600, toSecond: 1200, factor: 3))

    @Test(arguments: [(0.0, 1.0), (599.9, 1), (600, 3), (900, 3), (1199.9, 3), (1200, 1), (5000, 1)])
    func theFactorIsTheRushHoursInsideItAndOneElsewhere(second: Double, factor: Double) {
        #expect(Self.rush.factor(at: second) == factor)
        #expect(DemandProfile.steady.factor(at: second) == 1)
    }

    /// Steady, the wait is the homogeneous process's: the unit draw over the rate.
    @Test func aSteadyProfileWaitsTheWorkOverTheRate() {
        #expect(DemandProfile.steady.nextArrival(after: 100, work: 2, perSecond: 0.5) == 104)
        #expect(Self.rush.nextArrival(after: 100, work: 2, perSecond: 0.5) == 104)
    }

    /// Work left at a boundary is spent at the next rate.
    @Test func theWorkCarriesAcrossTheBoundaries() {
        // 10 s before the rush at 0.1/s spends 1 of 2.5; the remaining 1.5 at 0.3/s takes 5 s.
        #expect(Self.rush.nextArrival(after: 590, work: 2.5, perSecond: 0.1) == 605)
        // Inside the rush 10 s at 0.3/s spends 3 of 4; the remaining 1 at 0.1/s takes 10 s.
        #expect(abs(Self.rush.nextArrival(after: 1190, work: 4, perSecond: 0.1) - 1210) < 1e-9)
        // Across the whole rush: 1 before, 180 inside (600 s × 0.3), 1 after.
        #expect(abs(Self.rush.nextArrival(after: 590, work: 182, perSecond: 0.1) - 1210) < 1e-9)
        #expect(DemandProfile.steady.nextArrival(after: 0, work: 1, perSecond: 0) == .infinity)
    }

    /// A factor below 1 thins demand as well.
    @Test func aQuietHourSlowsArrivals() {
        let quiet = DemandProfile(rushHour: .init(fromSecond: 0, toSecond: 100, factor: 0.5))
        #expect(quiet.nextArrival(after: 0, work: 1, perSecond: 0.1) == 20)
    }

    /// Seeded arrivals over an hour at 2 a minute, ×3 from minute 10 to 20: about 20 in the rush's ten minutes per
    /// ten quiet ones' 20/3 (the expected counts, 60 and 100, within a few standard deviations).
    @Test func seededArrivalsFollowTheRate() {
        var random = SeededGenerator(seed: 7, stream: "arrivals")
        var second = 0.0, inside = 0, outside = 0
        while true {
            second = Self.rush.nextArrival(
                after: second, work: random.exponential(mean: 1), perSecond: 2.0 / 60)
            guard second < 3600 else { break }
            if Self.rush.factor(at: second) > 1 { inside += 1 } else { outside += 1 }
        }
        #expect((40...80).contains(inside), "\(inside) in the rush")
        #expect((75...125).contains(outside), "\(outside) outside it")
    }
}
