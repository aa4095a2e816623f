import Foundation
import Testing
import CitySimulator

/// The report's `dispatch` section from hand-made requests and provider assignments.
@Suite struct DispatchFiguresTests {
    static let t0 = Date(timeIntervalSince1970: 1_780_000_000)
    static func at(_ s: Double) -> Date { t0.addingTimeInterval(s) }

    /// One table row: the run's requests, the providers' assignments, and the figures they make.
    struct Case: Sendable, CustomStringConvertible {
        var description: String
        var requests: [String]
        var assignments: [String: SimulationObservations.Assignment]
        var pickupMean: Double?
        var pickupP90: Double?
        var matchP50: Double?
        var matchP99: Double?
        var matchedShare: Double?
        var emptyKm: Double?
    }

    static let cases: [Case] = [
        Case(
            description: "three of four matched, one approach abandoned",
            requests: ["T1", "T2", "T3", "T4"],
            assignments: [
                "T1": .init(requestedAt: at(0), assignedAt: at(10), atPickup: at(130), approachMetres: 1500),
                "T2": .init(requestedAt: at(5), assignedAt: at(45), atPickup: at(345), approachMetres: 2500),
                "T3": .init(requestedAt: at(20), assignedAt: at(22), atPickup: nil, approachMetres: 800),
            ],
            // Pickups 120 and 300 s; matches 2, 10, 40 s (nearest rank); (1.5 + 2.5 + 0.8) km over 3 trips.
            pickupMean: 210, pickupP90: 300, matchP50: 10, matchP99: 40, matchedShare: 0.75, emptyKm: 1.6),
        Case(
            description: "a request counted once, an assignment outside the run's requests ignored",
            requests: ["A", "A", "B"],
            assignments: [
                "A": .init(requestedAt: at(0), assignedAt: at(30), atPickup: at(90), approachMetres: 1000),
                "Z": .init(requestedAt: at(0), assignedAt: at(500), atPickup: at(900), approachMetres: 9000),
            ],
            pickupMean: 60, pickupP90: 60, matchP50: 30, matchP99: 30, matchedShare: 0.5, emptyKm: 1),
        Case(
            description: "no request matched",
            requests: ["A"], assignments: [:],
            pickupMean: nil, pickupP90: nil, matchP50: nil, matchP99: nil, matchedShare: 0, emptyKm: nil),
        Case(
            description: "no requests at all",
            requests: [], assignments: [:],
            pickupMean: nil, pickupP90: nil, matchP50: nil, matchP99: nil, matchedShare: nil, emptyKm: nil),
    ]

    @Test(arguments: cases)
    func eachFigureComesFromTheAssignments(_ row: Case) {
        var seen = SimulationObservations()
        seen.tripIDs = row.requests
        seen.assignments = row.assignments
        let figures = SimulationReport.DispatchFigures(seen, policy: "batched", windowSeconds: 2)
        #expect(figures.pickupSeconds.mean == row.pickupMean)
        #expect(figures.pickupSeconds.p90 == row.pickupP90)
        #expect(figures.matchSeconds.p50 == row.matchP50)
        #expect(figures.matchSeconds.p99 == row.matchP99)
        #expect(figures.matchedShare == row.matchedShare)
        #expect(figures.emptyKmPerTrip == row.emptyKm)
    }

    /// The policy and window are the server's: greedy has no window, and a server that did not say leaves both null.
    @Test(
        arguments: [
            ("greedy", 2.0, "greedy", nil), ("batched", 0.5, "batched", 0.5), (nil, nil, nil, nil),
        ] as [(String?, Double?, String?, Double?)])
    func thePolicyIsTheServers(policy: String?, window: Double?, shown: String?, shownWindow: Double?) {
        let findings = ServerFindings(
            providerSteps: nil, ledgerBalanced: nil, captured: nil, dispatchPolicy: policy,
            dispatchWindowSeconds: window)
        let report = SimulationReport(SimulationObservations(), server: findings)
        #expect(report.dispatch.policy == shown)
        #expect(report.dispatch.windowSeconds == shownWindow)
    }

    /// report.json's `dispatch` has exactly its keys, nulls for missing figures, and the summary shows it.
    @Test func theSectionIsInTheJSONAndTheTable() throws {
        var seen = SimulationObservations()
        seen.tripIDs = ["T1", "T2"]
        seen.assignments = ["T1": .init(requestedAt: Self.at(0), assignedAt: Self.at(8), atPickup: Self.at(68))]
        let findings = ServerFindings(
            providerSteps: nil, ledgerBalanced: nil, captured: nil, dispatchPolicy: "batched",
            dispatchWindowSeconds: 2)
        let report = SimulationReport(seen, server: findings)
        let object = try #require(try JSONSerialization.jsonObject(with: report.json()) as? [String: Any])
        let dispatch = try #require(object["dispatch"] as? [String: Any])
        #expect(Set(dispatch.keys) == Set(SimulationReport.DispatchFigures.keys))
        #expect(dispatch["policy"] as? String == "batched" && dispatch["matchedShare"] as? Double == 0.5)
        let pickup = try #require(dispatch["pickupSeconds"] as? [String: Any])
        #expect(Set(pickup.keys) == ["mean", "p90"] && pickup["mean"] as? Double == 60)
        let match = try #require(dispatch["matchSeconds"] as? [String: Any])
        #expect(Set(match.keys) == ["p50", "p99"] && match["p99"] as? Double == 8)
        let table = report.table(seen)
        #expect(table.contains("batched, window 2 s"))
        #expect(table.contains("60.0 s / 60.0 s"))
        #expect(table.contains("50.0 % of 2"))
        #expect(report.html(seen, title: "t").contains("Pickup time"))
    }
}
