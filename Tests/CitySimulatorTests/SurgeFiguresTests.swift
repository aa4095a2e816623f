import Foundation
import Testing
import EnRouteModels
import CitySimulator

/// The report's `dispatch.surge` section from hand-made estimates and the server's multipliers, and its `demand`.
@Suite struct SurgeFiguresTests {
    typealias Figures = SimulationReport.SurgeFigures
    static let fare = Money(amountMinor: 1200, currency: "EUR")

    static func seen(_ estimates: [(String?, Bool)]) -> SimulationObservations {
        var seen = SimulationObservations()
        seen.estimatesShown = estimates.enumerated().map { n, estimate in
            .init(second: Double(60 * n), quoteId: estimate.0, fare: fare, booked: estimate.1)
        }
        return seen
    }

    @Test func theShareIsOfTheEstimatesForRidesAskedForNow() {
        let seen = Self.seen([("q1", false), ("q2", false), ("q3", true), ("q4", false), ("q5", false)])
        let figures = Figures(seen, quoteDemand: ["q1": 1, "q2": 1.4, "q3": 1, "q4": 1.1, "q5": 1])
        // q3 was booked ahead: left out. Two of the four others above 1.
        #expect(figures.quotes == 4 && figures.quotedShare == 0.5 && figures.max == 1.4)
        #expect(figures.samples.map(\.second) == [0, 60, 180, 240])
    }

    @Test func withoutSurgeTheLargestMultiplierIsOne() {
        let figures = Figures(Self.seen([("q1", false), ("q2", false)]), quoteDemand: ["q1": 1, "q2": 1])
        #expect(figures.quotes == 2 && figures.quotedShare == 0 && figures.max == 1)
    }

    /// A server that cannot say what a quote was priced under (`--server`), a quote it no longer has, an estimate
    /// without a quote: not counted; with none left the figures are null.
    @Test func anUnknownMultiplierIsNotCounted() {
        let seen = Self.seen([("q1", false), (nil, false), ("gone", false)])
        let unknown = Figures(seen, quoteDemand: nil)
        #expect(unknown.quotes == 0 && unknown.quotedShare == nil && unknown.max == nil)
        let partial = Figures(seen, quoteDemand: ["q1": 2])
        #expect(partial.quotes == 1 && partial.quotedShare == 1 && partial.max == 2)
    }

    /// report.json's `dispatch.surge` is always there, `demand` states the profile run; the table shows both.
    @Test func theSectionsAreInTheJSONAndTheTable() throws {
        let findings = ServerFindings(
            providerSteps: nil, ledgerBalanced: nil, captured: nil, dispatchPolicy: "greedy", quoteDemand: ["q2": 1.3])
        let seen = Self.seen([("q1", false), ("q2", false)])
        let demand = SimulationReport.DemandFigures(
            ridesPerMinute: 2, ordersPerMinute: 1,
            profile: DemandProfile(rushHour: .init(fromSecond: 600, toSecond: 1500, factor: 4)))
        let report = SimulationReport(seen, server: findings, demand: demand)
        let object = try #require(try JSONSerialization.jsonObject(with: report.json()) as? [String: Any])
        let dispatch = try #require(object["dispatch"] as? [String: Any])
        let surge = try #require(dispatch["surge"] as? [String: Any])
        #expect(Set(surge.keys) == Set(Figures.keys))
        #expect(surge["quotes"] as? Int == 1 && surge["quotedShare"] as? Double == 1 && surge["max"] as? Double == 1.3)
        let stated = try #require(object["demand"] as? [String: Any])
        #expect(Set(stated.keys) == Set(SimulationReport.DemandFigures.keys))
        let rush = try #require(stated["rushHour"] as? [String: Any])
        #expect(Set(rush.keys) == Set(SimulationReport.DemandFigures.rushHourKeys))
        #expect(rush["fromSeconds"] as? Double == 600 && rush["factor"] as? Double == 4)
        let table = report.table(seen)
        #expect(table.contains("100.0 % of 1 · ×1.3"))
        #expect(table.contains("2 rides and 1 orders a minute, ×4 from minute 10 to 25"))
        #expect(report.quotesCSV() == "second,multiplier\n60,1.3\n")

        let steady = SimulationReport(
            seen, server: .unknown, demand: .init(ridesPerMinute: 6, ordersPerMinute: 6))
        let plain = try #require(try JSONSerialization.jsonObject(with: steady.json()) as? [String: Any])
        #expect((plain["demand"] as? [String: Any])?["rushHour"] is NSNull)
        #expect(!steady.table(seen).contains("largest multiplier"))
        #expect(steady.table(seen).contains("6 rides and 6 orders a minute, steady"))
    }
}
