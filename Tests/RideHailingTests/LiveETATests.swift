import Foundation
import Testing
import EnRouteModels
@testable import RideHailing

/// The ride tracking screen's guard over the live channel's ETAs: a late answer never overwrites a newer one.
@Suite struct LiveETATests {
    @Test func aFixCarryingAnETAMovesItWithoutAVersionChange() {
        var eta = LiveETA()
        eta.apply(Fixtures.trip(.driverAssigned, version: 2, eta: 300))
        do { let applied = eta.apply(Fixtures.location(seq: 1, eta: 280)); #expect(applied) }
        #expect(eta.seconds == 280)
        #expect(eta.latest == Fixtures.time.addingTimeInterval(280))
        do { let applied = eta.apply(Fixtures.location(seq: 2, eta: 250)); #expect(applied) }
        #expect(eta.seconds == 250)
        #expect(eta.version == 2)
    }

    @Test func aLateFixNeverOverwritesANewerFixsETA() {
        var eta = LiveETA()
        eta.apply(Fixtures.trip(.driverAssigned, version: 2, eta: 300))
        eta.apply(Fixtures.location(seq: 5, eta: 200))
        do { let applied = eta.apply(Fixtures.location(seq: 4, eta: 260)); #expect(!applied, "older fix") }
        do { let applied = eta.apply(Fixtures.location(seq: 5, eta: 190)); #expect(!applied, "duplicate fix") }
        #expect(eta.seconds == 200)
        #expect(eta.seq == 5)
    }

    @Test func aHigherTripVersionStillWinsOverAFixsETA() {
        var eta = LiveETA()
        eta.apply(Fixtures.trip(.driverAssigned, version: 2, eta: 300))
        eta.apply(Fixtures.location(seq: 5, eta: 200))
        do { let applied = eta.apply(Fixtures.trip(.driverArrived, version: 3, eta: 0)); #expect(applied) }
        #expect(eta.seconds == 0)
        #expect(eta.latest == nil)
        do {
            let applied = eta.apply(Fixtures.trip(.driverAssigned, version: 2, eta: 300));
            #expect(!applied, "an older version is late")
        }
        #expect(eta.seconds == 0)
        do {
            let applied = eta.apply(Fixtures.location(seq: 5, eta: 200));
            #expect(!applied, "the fix already applied stays old after the version")
        }
        do {
            let applied = eta.apply(Fixtures.location(seq: 6, eta: 900));
            #expect(applied, "a newer fix after the version applies")
        }
        #expect(eta.seconds == 900)
    }

    @Test func aFixWithoutAnETAOrBeforeAnyTripLeavesTheETAAlone() {
        var eta = LiveETA()
        do { let applied = eta.apply(Fixtures.location(seq: 1, eta: 100)); #expect(!applied, "no trip yet") }
        eta.apply(Fixtures.trip(.driverAssigned, version: 2, eta: 300))
        do { let applied = eta.apply(Fixtures.location(seq: 2)); #expect(!applied, "an older server sends no ETA") }
        #expect(eta.seconds == 300)
        do { let applied = eta.apply(Fixtures.location(seq: 2, eta: 290)); #expect(applied) }
    }

    @Test func aNewTripStartsOver() {
        var eta = LiveETA()
        eta.apply(Fixtures.trip(.driverAssigned, version: 9, eta: 300))
        eta.apply(Fixtures.location(seq: 40, eta: 100))
        do { let applied = eta.apply(Fixtures.trip(.searching, version: 1, id: "T-2", eta: 500)); #expect(applied) }
        #expect(eta.seconds == 500)
        do { let applied = eta.apply(Fixtures.location(seq: 1, eta: 480)); #expect(applied) }
        #expect(eta.tripID == "T-2")
    }

    @Test func theSequenceGrowsWithEveryNewerVersionOrFixAndNeverFalls() {
        var eta = LiveETA()
        var seen: [Int] = []
        eta.apply(Fixtures.trip(.driverAssigned, version: 2, eta: 300)); seen.append(eta.sequence)
        eta.apply(Fixtures.location(seq: 7, eta: 280)); seen.append(eta.sequence)
        eta.apply(Fixtures.location(seq: 8, eta: 270)); seen.append(eta.sequence)
        eta.apply(Fixtures.trip(.driverAssigned, version: 3, eta: 260)); seen.append(eta.sequence)
        eta.apply(Fixtures.location(seq: 6, eta: 999)); seen.append(eta.sequence)  // late: no change
        eta.apply(Fixtures.location(seq: 9, eta: 250)); seen.append(eta.sequence)
        #expect(seen == seen.sorted())
        #expect(Set(seen).count == 5)
        #expect(seen[4] == seen[3])
    }
}
