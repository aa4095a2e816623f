import Foundation
import Routing
import Testing

/// Speed factors by hour of the week and road class, and their text file.
@Suite struct TimeOfDaySpeedsTests {
    static let mondayEight = 8, mondayThree = 3, saturdayEight = 5 * 24 + 8, fridayFive = 4 * 24 + 17

    @Test func theStandardTableSlowsArterialsMostInRushHourAndIsFreeFlowAtNight() {
        let table = TimeOfDaySpeeds.standard
        #expect(table.factor(.primary, hourOfWeek: Self.mondayEight) == 0.65)
        #expect(table.factor(.motorway, hourOfWeek: Self.fridayFive) == 0.6)
        #expect(table.factor(.tertiary, hourOfWeek: Self.mondayEight) == 0.8)
        #expect(table.factor(.residential, hourOfWeek: Self.mondayEight) == 0.9)
        for roadClass in RoadClass.allCases {
            #expect(table.factor(roadClass, hourOfWeek: Self.mondayThree) == 1)
            #expect(table.factor(roadClass, hourOfWeek: Self.saturdayEight) == 1)
        }
        // Hours wrap round the week.
        #expect(table.factor(.primary, hourOfWeek: Self.mondayEight + 168) == 0.65)
    }

    @Test func eachEdgeTakesItsFreeFlowDurationOverItsClassFactor() {
        var network = RoadNetwork(turnCosts: .none)
        let a = network.addNode(id: 1, lat: 60, lon: 25), b = network.addNode(id: 2, lat: 60.001, lon: 25)
        network.addEdge(from: a, to: b, durationSeconds: 13, roadClass: RoadClass.primary.edgeRawValue)
        network.addEdge(from: b, to: a, durationSeconds: 9, roadClass: RoadClass.residential.edgeRawValue)
        let rush = TimeOfDaySpeeds.standard.durations(of: network, hourOfWeek: Self.mondayEight)
        #expect(abs(rush[0] - 13 / 0.65) < 1e-9)
        #expect(abs(rush[1] - 9 / 0.9) < 1e-9)
        #expect(TimeOfDaySpeeds.standard.durations(of: network, hourOfWeek: Self.mondayThree) == [13, 9])
    }

    @Test func theHourOfTheWeekCountsFromMondayMidnightInTheMapsTimeZone() throws {
        // 2024-01-01 was a Monday.
        let mondayHalfPastEightUTC = try #require(ISO8601DateFormatter().date(from: "2024-01-01T08:30:00Z"))
        #expect(TimeOfDaySpeeds.hourOfWeek(of: mondayHalfPastEightUTC, in: TimeZone(identifier: "UTC")!) == 8)
        #expect(
            TimeOfDaySpeeds.hourOfWeek(of: mondayHalfPastEightUTC, in: TimeZone(identifier: "Europe/Helsinki")!) == 10)
        let sundayLateUTC = try #require(ISO8601DateFormatter().date(from: "2024-01-07T23:59:00Z"))
        #expect(TimeOfDaySpeeds.hourOfWeek(of: sundayLateUTC, in: TimeZone(identifier: "UTC")!) == 167)
    }

    @Test func theTextFormRoundTrips() throws {
        let text = TimeOfDaySpeeds.standard.text
        #expect(try TimeOfDaySpeeds(text: text) == TimeOfDaySpeeds.standard)
        // Runs of identical days share a line: the standard table needs mon-fri and sat-sun for each class.
        #expect(text.split(separator: "\n").count == 2 + 2 * RoadClass.allCases.count)
        #expect(text.contains("\nprimary mon-fri 1 1 1 1 1 1 0.85 0.65 0.65 0.85 "))
    }

    @Test func laterLinesOverrideEarlierOnesAndUncoveredHoursAreFreeFlow() throws {
        let slow = Array(repeating: "0.5", count: 24).joined(separator: " ")
        let fast = Array(repeating: "1.2", count: 24).joined(separator: " ")
        let table = try TimeOfDaySpeeds(
            text: """
                # a test table
                enroute-speeds 1

                *        mon-wed,fri  \(slow)
                primary  tue          \(fast)   # trailing comment
                """)
        #expect(table.factor(.residential, hourOfWeek: 0) == 0.5)
        #expect(table.factor(.primary, hourOfWeek: 24 + 5) == 1.2)
        #expect(table.factor(.residential, hourOfWeek: 24 + 5) == 0.5)
        #expect(table.factor(.residential, hourOfWeek: 3 * 24) == 1)
        #expect(table.factor(.residential, hourOfWeek: 4 * 24) == 0.5)
        #expect(table.factor(.service, hourOfWeek: 6 * 24 + 23) == 1)
    }

    static let ones = Array(repeating: "1", count: 24).joined(separator: " ")

    @Test(arguments: [
        ("primary mon \(ones)", 1, 1, "expected the header 'enroute-speeds 1'"),
        ("", 1, 1, "expected the header 'enroute-speeds 1'"),
        ("enroute-speeds 1\nprimry mon \(ones)", 2, 1, "unknown road class 'primry'"),
        ("enroute-speeds 1\n  primary", 2, 10, "expected days after the road class"),
        ("enroute-speeds 1\nprimary mon-fry \(ones)", 2, 13, "unknown day 'fry' (mon ... sun, a range or a list)"),
        ("enroute-speeds 1\nprimary sat,mon-fri,x \(ones)", 2, 21, "unknown day 'x' (mon ... sun, a range or a list)"),
        ("enroute-speeds 1\nprimary fri-mon \(ones)", 2, 9, "the day range 'fri-mon' runs backwards"),
        ("enroute-speeds 1\nprimary mon 1 1", 2, 16, "expected 24 factors, found 2"),
        ("enroute-speeds 1\nprimary mon \(ones) 1", 2, 61, "expected 24 factors, found 25"),
        ("enroute-speeds 1\nprimary mon fast \(ones.dropFirst(2))", 2, 13, "'fast' is not a number"),
        ("enroute-speeds 1\nprimary mon 0 \(ones.dropFirst(2))", 2, 13, "factor 0 is not in (0, 2.0]"),
        ("enroute-speeds 1\nprimary mon \(ones.dropLast(1))2.5", 2, 59, "factor 2.5 is not in (0, 2.0]"),
    ])
    func malformedInputIsRejectedAtItsLineAndColumn(text: String, line: Int, column: Int, message: String) {
        #expect(throws: SpeedTableError(line: line, column: column, message: message)) {
            try TimeOfDaySpeeds(text: text)
        }
    }

    @Test func anErrorDescribesItsPlace() {
        #expect(
            SpeedTableError(line: 3, column: 9, message: "unknown road class 'x'").description
                == "line 3, column 9: unknown road class 'x'")
    }
}
