import Foundation
import Testing
import CitySimulator

/// The report's figures from hand-made observations.
@Suite struct SimulationReportTests {
    let t0 = Date(timeIntervalSince1970: 1_780_000_000)
    func at(_ s: Double) -> Date { t0.addingTimeInterval(s) }

    @Test func etaHonestyIsTheShareOfArrivalsInsideTheLastWindow() {
        var seen = SimulationObservations()
        seen.orderArrivals = [
            .init(lastWindow: at(0)...at(240), firstOnTheWayWindow: at(0)...at(240), deliveredAt: at(100)),
            .init(lastWindow: at(0)...at(120), firstOnTheWayWindow: at(0)...at(120), deliveredAt: at(200)),
            .init(lastWindow: at(0)...at(180), firstOnTheWayWindow: nil, deliveredAt: at(180)),
            .init(lastWindow: nil, firstOnTheWayWindow: nil, deliveredAt: at(50)),
        ]
        let report = SimulationReport(seen, server: .unknown)
        #expect(report.etaHonesty == 2.0 / 3.0)
        #expect(report.etaRangeMedianMinutes == 3)
        // |100 − 120| and |200 − 60|.
        #expect(report.etaErrorSeconds.mae == 80)
        #expect(report.etaErrorSeconds.p90 == 140)
    }

    /// The courier at the door is the arrival when known (the customer may see "delivered" late, after a partition);
    /// the stricter figure weighs every window by the seconds it was on screen.
    @Test func honestyUsesTheDoorArrivalAndWeighsEveryWindowShownOnTheWay() {
        var seen = SimulationObservations()
        seen.orderArrivals = [
            .init(
                lastWindow: at(0)...at(120), firstOnTheWayWindow: at(0)...at(120), deliveredAt: at(150),
                arrivedAt: at(110),
                onTheWayWindows: [at(0)...at(60): 30, at(60)...at(120): 10]),
            .init(
                lastWindow: at(0)...at(120), firstOnTheWayWindow: nil, deliveredAt: at(150),
                onTheWayWindows: [at(100)...at(200): 20]),
        ]
        let report = SimulationReport(seen, server: .unknown)
        #expect(report.etaHonesty == 0.5)
        // 10 of 30 + 10 seconds held 110 s; 20 of 20 held 150 s.
        #expect(report.etaHonestyOnTheWay == 30.0 / 60.0)
        #expect(report.etaErrorSeconds.mae == 50)
    }

    @Test func theArrivalsTableCountsFromTheDoor() {
        var seen = SimulationObservations()
        seen.orderArrivals = [
            .init(
                lastWindow: at(60)...at(120), firstOnTheWayWindow: at(0)...at(90), deliveredAt: at(115),
                arrivedAt: at(100),
                onTheWayWindows: [at(0)...at(90): 30, at(60)...at(120): 10])
        ]
        let rows = SimulationReport.arrivalsCSV(seen).split(separator: "\n")
        #expect(rows.count == 2)
        #expect(rows[1] == "1,15,-40,20,-100,-10,40,10")
    }

    @Test func aPinIsStaleShownAsLiveOnlyPastTwentySeconds() {
        var seen = SimulationObservations()
        seen.livePinAges = [0, 5, 19.9, 20, 20.5, 31]
        #expect(SimulationReport(seen, server: .unknown).staleShownAsLive == 2)
    }

    @Test func pollsAreCountedPerOrderMinuteByStage() {
        var seen = SimulationObservations()
        seen.polls = [.picking: 40, .onTheWay: 120, .background: 0]
        seen.orderMinutes = [.picking: 10, .onTheWay: 10, .background: 3]
        let rates = SimulationReport(seen, server: .unknown).pollsPerOrderMinute
        #expect(rates.picking == 4)
        #expect(rates.onTheWay == 12)
        #expect(rates.background == 0)
    }

    /// Lost: acknowledged to a device but not in the log, or never sent; duplicated: a change id or a status twice.
    @Test func stepsLostAndDuplicatedCompareTheOutboxesWithTheChangeLog() {
        var seen = SimulationObservations()
        seen.acknowledgedSteps = ["T1": ["a", "b", "c"], "T2": ["d"]]
        seen.unsentSteps = 1
        let logs: [String: [ServerFindings.Step]] = [
            "T1": [.init(changeId: "a", status: "onTheWay"), .init(changeId: "b", status: "arriving")],
            "T2": [
                .init(changeId: "d", status: "driverArrived"), .init(changeId: "d", status: "onTrip"),
                .init(changeId: "e", status: "onTrip"),
            ],
        ]
        let report = SimulationReport(
            seen, server: ServerFindings(providerSteps: logs, ledgerBalanced: true, captured: nil))
        #expect(report.stepsLost == 2)
        #expect(report.stepsDuplicated == 2)
        #expect(report.ledgerBalanced == true)
        #expect(report.paymentsCaptured == nil)
    }

    @Test func paymentsCapturedCountsOnlyTripsThatShouldBePaid() {
        var seen = SimulationObservations()
        seen.paidTripIDs = ["T1", "T2", "T3"]
        let report = SimulationReport(
            seen, server: ServerFindings(providerSteps: [:], ledgerBalanced: false, captured: ["T1", "T3", "T9"]))
        #expect(report.paymentsCaptured == 2)
        #expect(report.paymentsExpected == 3)
        #expect(report.ledgerBalanced == false)
    }

    @Test func percentilesAreNearestRank() {
        #expect(SimulationReport.percentile([5, 1, 4, 2, 3], 50) == 3)
        #expect(SimulationReport.percentile(Array(1...100).map(Double.init), 99) == 99)
        #expect(SimulationReport.percentile([], 50) == nil)
    }

    /// Other tools read report.json by these names; a figure without data is null, never missing.
    @Test func theJSONHasExactlyTheIssuesKeysWithNullsForMissingFigures() throws {
        let data = try SimulationReport(SimulationObservations(), server: .unknown).json()
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(Set(object.keys) == Set(SimulationReport.keys))
        #expect(object["etaHonesty"] is NSNull)
        #expect(object["stepsLost"] is NSNull)
        let spread = try #require(object["etaErrorSeconds"] as? [String: Any])
        #expect(Set(spread.keys) == ["mae", "p90"])
        let polls = try #require(object["pollsPerOrderMinute"] as? [String: Any])
        #expect(Set(polls.keys) == ["picking", "onTheWay", "background"])
    }

    @Test func thePageIsSelfContained() {
        var seen = SimulationObservations()
        seen.matchSeconds = [3, 4, 10]
        let page = SimulationReport(seen, server: .unknown).html(seen, title: "t <1>")
        #expect(page.contains("<svg"))
        #expect(page.contains("t &lt;1&gt;"))
        #expect(!page.contains("src=\"http") && !page.contains("href=\"http"))
    }
}
