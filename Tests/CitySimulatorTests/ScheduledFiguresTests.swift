import Foundation
import Testing
import EnRouteModels
import CitySimulator

/// The report's `dispatch.scheduled` section from hand-made bookings and provider assignments.
@Suite struct ScheduledFiguresTests {
    static let t0 = Date(timeIntervalSince1970: 1_780_000_000)
    static func at(_ s: Double) -> Date { t0.addingTimeInterval(s) }
    static let due = at(1800)
    /// A provider assigned `assigned` seconds after the booked time (negative: before) that reached the pickup
    /// `arrived` seconds after it (nil: never).
    static func served(_ assigned: Double, _ arrived: Double?) -> SimulationObservations.Assignment {
        .init(requestedAt: at(0), assignedAt: due.addingTimeInterval(assigned), atPickup: arrived.map { due + $0 })
    }
    static func booked(_ ended: TripState? = nil) -> SimulationObservations.BookedRide {
        .init(scheduledFor: due, matchingStartedAt: nil, ended: ended)
    }

    /// One table row: the run's requests, the booked ones, the providers' assignments, and the figures they make.
    struct Case: Sendable, CustomStringConvertible {
        var description: String
        var requests: [String]
        var booked: [String: SimulationObservations.BookedRide]
        var assignments: [String: SimulationObservations.Assignment]
        var count: Int
        var matchedBeforeDue: Double?
        var onTime: Double?
    }

    static let cases: [Case] = [
        Case(
            description: "no ride booked", requests: ["N1"], booked: [:],
            assignments: ["N1": served(-100, 0)], count: 0, matchedBeforeDue: nil, onTime: nil),
        Case(
            description: "assigned before or at the time, arriving within five minutes either way, count",
            requests: ["B1", "B2", "B3", "B4", "B5", "B6", "N1"],
            booked: ["B1": booked(), "B2": booked(), "B3": booked(), "B4": booked(), "B5": booked(), "B6": booked()],
            assignments: [
                // Early by 2 min; assigned at the very second it is due, 4 min late; assigned late and 6 min late;
                // 6 min early; never assigned (B5); assigned but never at the pickup.
                "B1": served(-400, -120), "B2": served(0, 240), "B3": served(30, 360), "B4": served(-900, -360),
                "B6": served(-200, nil), "N1": served(10_000, 10_000),
            ],
            // B1 B2 B4 B6 matched by the time (4 of 6); B1 B2 on time (2 of 6).
            count: 6, matchedBeforeDue: 4.0 / 6, onTime: 2.0 / 6),
        Case(
            description: "exactly five minutes early or late is on time",
            requests: ["E", "L"], booked: ["E": booked(), "L": booked()],
            assignments: ["E": served(-600, -300), "L": served(-1, 300)],
            count: 2, matchedBeforeDue: 1, onTime: 1),
        Case(
            description: "a booking outside the run's requests is ignored, a repeated request counted once",
            requests: ["B", "B"], booked: ["B": booked(), "Z": booked()],
            assignments: ["B": served(-300, 0), "Z": served(-300, 0)],
            count: 1, matchedBeforeDue: 1, onTime: 1),
    ]

    @Test(arguments: cases)
    func eachFigureComesFromTheBookingsAndAssignments(_ row: Case) {
        var seen = SimulationObservations()
        seen.tripIDs = row.requests
        seen.bookedRides = row.booked
        seen.assignments = row.assignments
        let figures = SimulationReport.DispatchFigures(seen, policy: "greedy", windowSeconds: nil).scheduled
        #expect(figures.count == row.count)
        #expect(figures.matchedBeforeDueShare == row.matchedBeforeDue)
        #expect(figures.onTimeShare == row.onTime)
    }

    @Test func bookedRidesAreLeftOutOfTheMatchTimeButCountAsMatched() {
        var seen = SimulationObservations()
        seen.tripIDs = ["N1", "N2", "B1"]
        seen.bookedRides = ["B1": Self.booked()]
        seen.assignments = [
            "N1": .init(requestedAt: Self.at(0), assignedAt: Self.at(4)),
            "N2": .init(requestedAt: Self.at(0), assignedAt: Self.at(12)),
            "B1": Self.served(-300, 0),
        ]
        let figures = SimulationReport.DispatchFigures(seen, policy: "greedy", windowSeconds: nil)
        #expect(figures.matchSeconds.p50 == 4)
        #expect(figures.matchSeconds.p99 == 12)
        #expect(figures.matchedShare == 1)
    }

    typealias Misses = SimulationReport.ScheduledMisses

    /// Misses with one ride counted under `reason`.
    static func one(_ reason: WritableKeyPath<Misses, Int>) -> Misses {
        var misses = Misses(SimulationObservations())
        misses[keyPath: reason] = 1
        return misses
    }

    /// Each kind of miss: the booked ride as its rider saw it end, its provider's assignment, the miss it makes.
    static let misses: [(String, SimulationObservations.BookedRide, SimulationObservations.Assignment?, Misses)] = [
        ("cancelled before a provider", booked(.cancelled), nil, one(\.cancelledUnmatched)),
        ("ended without a provider", booked(.noDriversFound), nil, one(\.noProvider)),
        ("still waiting at the end", booked(), nil, one(\.unfinished)),
        ("assigned after the time, on time all the same", booked(.completed), served(60, 200), one(\.matchedLate)),
        ("at the pickup too early", booked(.completed), served(-900, -301), one(\.arrivedEarly)),
        ("at the pickup too late", booked(.completed), served(-60, 301), one(\.arrivedLate)),
        ("never at the pickup", booked(.cancelled), served(-60, nil), one(\.neverAtPickup)),
        ("on time", booked(.completed), served(-300, 120), Misses(SimulationObservations())),
    ]

    @Test(arguments: misses)
    func aMissIsCountedByItsReason(
        _ reason: String, ride: SimulationObservations.BookedRide, assignment: SimulationObservations.Assignment?,
        expected: Misses
    ) {
        var seen = SimulationObservations()
        seen.tripIDs = ["B"]
        seen.bookedRides = ["B": ride]
        seen.assignments = assignment.map { ["B": $0] } ?? [:]
        #expect(Misses(seen) == expected, "\(reason)")
    }

    /// report.json's `dispatch.scheduled` is always there (count 0 and nulls without bookings); the table shows it
    /// only when a ride was booked.
    @Test func theSectionIsInTheJSONAndTheTableOnlyWithBookings() throws {
        var seen = SimulationObservations()
        seen.tripIDs = ["N1"]
        let findings = ServerFindings(
            providerSteps: nil, ledgerBalanced: nil, captured: nil, dispatchPolicy: "greedy",
            dispatchWindowSeconds: nil)
        let none = try Self.scheduledJSON(SimulationReport(seen, server: findings))
        #expect(Set(none.keys) == Set(SimulationReport.ScheduledFigures.keys))
        #expect(none["count"] as? Int == 0 && none["matchedBeforeDueShare"] is NSNull && none["onTimeShare"] is NSNull)
        #expect(!SimulationReport(seen, server: findings).table(seen).contains("booked"))

        seen.tripIDs += ["B1", "B2"]
        seen.bookedRides = ["B1": Self.booked(.completed), "B2": Self.booked(.noDriversFound)]
        seen.assignments = ["B1": Self.served(-300, 60)]
        let report = SimulationReport(seen, server: findings)
        let some = try Self.scheduledJSON(report)
        #expect(some["count"] as? Int == 2 && some["onTimeShare"] as? Double == 0.5)
        let table = report.table(seen)
        #expect(table.contains("2 · 50.0 % · 50.0 %"))
        #expect(table.contains("0 · 1 · 0"))
    }

    @Test func theBookedCSVHasOneRowPerBookedRideRelativeToItsTime() {
        var seen = SimulationObservations()
        seen.tripIDs = ["N1", "B1", "B2", "B1"]
        seen.bookedRides = [
            "B1": .init(scheduledFor: Self.due, matchingStartedAt: Self.due - 420, ended: .completed),
            "B2": Self.booked(.noDriversFound),
        ]
        seen.assignments = ["B1": Self.served(-400, -170), "N1": Self.served(0, 0)]
        #expect(
            SimulationReport.bookedCSV(seen)
                == "trip,searchBegan,assigned,atPickup,ended\nB1,-420,-400,-170,completed\nB2,,,,noDriversFound\n")
    }

    static func scheduledJSON(_ report: SimulationReport) throws -> [String: Any] {
        let object = try #require(try JSONSerialization.jsonObject(with: report.json()) as? [String: Any])
        let dispatch = try #require(object["dispatch"] as? [String: Any])
        return try #require(dispatch["scheduled"] as? [String: Any])
    }
}
