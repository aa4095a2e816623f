import Foundation
import Testing
import EnRouteModels
import CitySimulator

/// The report's `dispatch.stacked` section from hand-made assignments, stacked offers and tracking sequences.
@Suite struct StackedFiguresTests {
    static let t0 = Date(timeIntervalSince1970: 1_780_000_000)
    static let assigned = SimulationObservations.Assignment(requestedAt: t0, assignedAt: t0.addingTimeInterval(20))
    static func stacked(_ seconds: Int?, carried: [String] = []) -> SimulationObservations.StackedOffer {
        .init(addedSeconds: seconds, carried: carried)
    }
    typealias Figures = SimulationReport.StackedFigures

    /// Observations of `orders` (each assigned unless listed in `unassigned`) with `rides` among the requests.
    static func seen(
        orders: [String], unassigned: Set<String> = [], rides: [String] = [],
        stacked: [String: SimulationObservations.StackedOffer] = [:], stopsBefore: [String: [Int]] = [:],
        delivered: [String]? = nil
    ) -> SimulationObservations {
        var seen = SimulationObservations()
        seen.paidTripIDs = delivered ?? orders
        seen.tripIDs = rides + orders
        seen.orderIDs = orders
        for id in rides + orders where !unassigned.contains(id) { seen.assignments[id] = assigned }
        seen.stackedOffers = stacked
        seen.stopsBeforeSeen = stopsBefore
        return seen
    }

    @Test func theShareIsOfTheOrdersAssignedAndLeavesRidesOut() {
        let figures = Figures(
            Self.seen(
                orders: ["A", "B", "C", "D", "E"], unassigned: ["E"], rides: ["R1", "R2"],
                stacked: ["B": Self.stacked(60), "D": Self.stacked(120), "Z": Self.stacked(30)]))
        // B and D of the four orders assigned; Z is no order of the run and the rides count nowhere.
        #expect(figures.ordersAssigned == 4 && figures.count == 2 && figures.share == 0.5)
    }

    @Test func withoutOrdersEveryFigureIsEmpty() {
        let figures = Figures(Self.seen(orders: [], rides: ["R1"]))
        #expect(figures.ordersAssigned == 0 && figures.count == 0 && figures.share == nil)
        #expect(figures.extraMinutesP90 == nil && figures.stopsBeforeFellToZeroShare == nil)
        #expect(figures.neverShowedStopsBefore == 0)
    }

    /// Nearest rank over the stacked offers' planned seconds in minutes; an offer without `addedSeconds` is left out.
    @Test func extraMinutesAreTheP90OfThePlannedAddedSeconds() {
        let orders = (1...11).map { "O\($0)" }
        var offers = Dictionary(
            uniqueKeysWithValues: orders.prefix(10).enumerated().map { ($1, Self.stacked(60 * ($0 + 1))) })
        offers["O11"] = Self.stacked(nil)
        let figures = Figures(Self.seen(orders: orders, stacked: offers))
        // 1…10 minutes: the 9th of 10.
        #expect(figures.count == 11 && figures.extraMinutesP90 == 9)
    }

    /// Each tracking sequence a stacked order's customer may see, and whether it counts as fallen to zero (nil: it
    /// never showed a stop before, and is counted apart).
    @Test(arguments: [
        ([1, 0], true), ([0, 1, 0], true), ([2, 1, 0], true), ([1, 2, 0], true), ([1], false), ([0], nil),
        ([], nil), ([0, 1], false),
    ])
    func aSequenceFallsToZeroWhenAStopBeforeIsFollowedByZero(sequence: [Int], fell: Bool?) {
        let figures = Figures(
            Self.seen(orders: ["S"], stacked: ["S": Self.stacked(60)], stopsBefore: ["S": sequence]))
        #expect(figures.stopsBeforeFellToZeroShare == fell.map { $0 ? 1 : 0 })
        #expect(figures.neverShowedStopsBefore == (fell == nil ? 1 : 0))
    }

    @Test func theTrackingFiguresAreOverTheDeliveredOrdersOfAStack() {
        let figures = Figures(
            Self.seen(
                orders: ["A", "B", "S1", "S2", "S3", "S4", "S5"],
                stacked: [
                    "S1": Self.stacked(60, carried: ["A"]), "S2": Self.stacked(60), "S3": Self.stacked(60),
                    "S4": Self.stacked(0), "S5": Self.stacked(60),
                ],
                // A, carried when S1 came, saw its stop fall; B rode alone; S1 fell; S2 never saw one; S3 still had
                // one when handed over; S4 saw nothing; S5 was still on the road at the end.
                stopsBefore: ["A": [1, 0], "B": [1, 0], "S1": [2, 1, 0], "S2": [0], "S3": [0, 1], "S5": [1]],
                delivered: ["A", "B", "S1", "S2", "S3", "S4"]))
        #expect(figures.deliveredOnStacks == 5)
        // Of A, S1 and S3, which showed a stop before theirs: A and S1 fell to 0.
        #expect(figures.stopsBeforeFellToZeroShare == 2.0 / 3.0)
        #expect(figures.neverShowedStopsBefore == 2)
    }

    /// report.json's `dispatch.stacked` is always there; the table shows it once an order was assigned, saying the
    /// added minutes are planned.
    @Test func theSectionIsInTheJSONAndTheTable() throws {
        let findings = ServerFindings(
            providerSteps: nil, ledgerBalanced: nil, captured: nil, dispatchPolicy: "greedy",
            dispatchWindowSeconds: nil)
        let rides = Self.seen(orders: [], rides: ["R1"])
        let none = try Self.stackedJSON(SimulationReport(rides, server: findings))
        #expect(Set(none.keys) == Set(Figures.keys))
        #expect(none["count"] as? Int == 0 && none["share"] is NSNull && none["extraMinutesP90"] is NSNull)
        #expect(!SimulationReport(rides, server: findings).table(rides).contains("stacked"))

        let seen = Self.seen(
            orders: ["A", "S"], stacked: ["S": Self.stacked(150)], stopsBefore: ["S": [1, 0]])
        let report = SimulationReport(seen, server: findings)
        let some = try Self.stackedJSON(report)
        #expect(some["ordersAssigned"] as? Int == 2 && some["count"] as? Int == 1 && some["share"] as? Double == 0.5)
        #expect(some["extraMinutesP90"] as? Double == 2.5 && some["stopsBeforeFellToZeroShare"] as? Double == 1)
        let table = report.table(seen)
        #expect(table.contains("1 of 2 assigned (50.0 %) · 2.5 min"))
        #expect(table.contains("(planned)"))
        #expect(table.contains("100.0 % · 0 of 1"))
    }

    static func stackedJSON(_ report: SimulationReport) throws -> [String: Any] {
        let object = try #require(try JSONSerialization.jsonObject(with: report.json()) as? [String: Any])
        let dispatch = try #require(object["dispatch"] as? [String: Any])
        return try #require(dispatch["stacked"] as? [String: Any])
    }
}
