public import Foundation

/// Speed factors by hour of the week and road class: an edge's duration at an hour is its free-flow duration
/// divided by its class's factor then (1 is free-flow, 0.5 half the speed).
///
/// Hours of the week count from Monday 00:00–01:00 (hour 0) to Sunday 23:00–24:00 (hour 167), in the map's local
/// time. The `standard` table, by class group and local hour (`a–b` means from a:00 up to b:00):
///
/// | Days    | Hours   | Arterials | Collectors | Local |
/// |---------|---------|-----------|------------|-------|
/// | Mon–Fri | 00–06   | 1.00      | 1.00       | 1.00  |
/// | Mon–Fri | 06–07   | 0.85      | 0.90       | 1.00  |
/// | Mon–Fri | 07–09   | 0.65      | 0.80       | 0.90  |
/// | Mon–Fri | 09–15   | 0.85      | 0.90       | 0.95  |
/// | Mon–Fri | 15–18   | 0.60      | 0.75       | 0.90  |
/// | Mon–Fri | 18–20   | 0.80      | 0.90       | 0.95  |
/// | Mon–Fri | 20–22   | 0.95      | 0.95       | 1.00  |
/// | Mon–Fri | 22–24   | 1.00      | 1.00       | 1.00  |
/// | Sat–Sun | 00–10   | 1.00      | 1.00       | 1.00  |
/// | Sat–Sun | 10–19   | 0.85      | 0.90       | 0.95  |
/// | Sat–Sun | 19–24   | 1.00      | 1.00       | 1.00  |
///
/// Arterials are motorway, trunk, primary and secondary roads and their links; collectors tertiary roads, their
/// links and unclassified roads; local roads residential, living streets and service roads. Rush hours are
/// slowest on arterials, where the traffic is; nights are free-flow everywhere.
public struct TimeOfDaySpeeds: Sendable, Equatable {
    /// Hours in a week.
    public static let hoursPerWeek = 168
    /// The classes the standard table slows most: motorway, trunk, primary, secondary and their links.
    public static let arterials: Set<RoadClass> = [
        .motorway, .motorwayLink, .trunk, .trunkLink, .primary, .primaryLink,
        .secondary, .secondaryLink,
    ]
    /// The classes the standard table slows moderately: tertiary, its links and unclassified.
    public static let collectors: Set<RoadClass> = [.tertiary, .tertiaryLink, .unclassified]

    /// Each class's 168 hourly factors.
    private var factors: [RoadClass: [Double]]

    /// Free-flow at every hour on every class (every factor 1).
    public init() {
        factors = Dictionary(
            uniqueKeysWithValues: RoadClass.allCases.map { ($0, [Double](repeating: 1, count: Self.hoursPerWeek)) })
    }

    /// The factor for `roadClass` at `hourOfWeek` (0 is Monday 00:00, taken modulo 168).
    public func factor(_ roadClass: RoadClass, hourOfWeek: Int) -> Double {
        factors[roadClass]![Self.normalised(hourOfWeek)]
    }

    /// Sets the factor for `roadClass` at `hourOfWeek`; it must be in (0, `maximumFactor`].
    public mutating func setFactor(_ factor: Double, for roadClass: RoadClass, hourOfWeek: Int) {
        precondition(factor > 0 && factor <= Self.maximumFactor, "a speed factor must be in (0, \(Self.maximumFactor)]")
        factors[roadClass]![Self.normalised(hourOfWeek)] = factor
    }

    /// The largest factor allowed: no class goes more than twice its free-flow speed.
    public static let maximumFactor = 2.0

    /// The standard table (see the type's documentation).
    public static let standard: TimeOfDaySpeeds = {
        var table = TimeOfDaySpeeds()
        // (first hour, end hour, arterial, collector, local) per day kind.
        let weekday: [(Int, Int, Double, Double, Double)] = [
            (0, 6, 1, 1, 1), (6, 7, 0.85, 0.9, 1), (7, 9, 0.65, 0.8, 0.9), (9, 15, 0.85, 0.9, 0.95),
            (15, 18, 0.6, 0.75, 0.9), (18, 20, 0.8, 0.9, 0.95), (20, 22, 0.95, 0.95, 1), (22, 24, 1, 1, 1),
        ]
        let weekend: [(Int, Int, Double, Double, Double)] = [
            (0, 10, 1, 1, 1), (10, 19, 0.85, 0.9, 0.95), (19, 24, 1, 1, 1),
        ]
        for day in 0..<7 {
            for (first, end, arterial, collector, local) in day < 5 ? weekday : weekend {
                for hour in first..<end {
                    for roadClass in RoadClass.allCases {
                        let factor =
                            arterials.contains(roadClass)
                            ? arterial : collectors.contains(roadClass) ? collector : local
                        table.setFactor(factor, for: roadClass, hourOfWeek: day * 24 + hour)
                    }
                }
            }
        }
        return table
    }()

    /// Each edge's duration in seconds at `hourOfWeek`: its free-flow duration over its class's factor (edges of an
    /// unknown class keep their free-flow duration).
    public func durations(of network: RoadNetwork, hourOfWeek: Int) -> [Double] {
        let hour = Self.normalised(hourOfWeek)
        let byRaw = RoadClass.allCases.map { factors[$0]![hour] }
        return (0..<network.edgeCount).map { edge in
            let raw = Int(network.edgeRoadClass[edge])
            return network.edgeDurationSeconds[edge] / (raw < byRaw.count ? byRaw[raw] : 1)
        }
    }

    /// The hour of the week (0 is Monday 00:00–01:00) of `date` in `timeZone`.
    public static func hourOfWeek(of date: Date, in timeZone: TimeZone) -> Int {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let parts = calendar.dateComponents([.weekday, .hour], from: date)
        // Calendar's weekday is 1 for Sunday ... 7 for Saturday.
        let dayFromMonday = (parts.weekday! + 5) % 7
        return dayFromMonday * 24 + parts.hour!
    }

    static func normalised(_ hourOfWeek: Int) -> Int {
        let hour = hourOfWeek % hoursPerWeek
        return hour < 0 ? hour + hoursPerWeek : hour
    }
}

extension RoadClass {
    /// The class of a raw `RoadNetwork.edgeRoadClass` value (its position in `allCases`, as the builder writes it).
    public init?(edgeRawValue raw: UInt8) {
        guard Int(raw) < Self.allCases.count else { return nil }
        self = Self.allCases[Int(raw)]
    }

    /// The raw `RoadNetwork.edgeRoadClass` value of this class: its position in `allCases`.
    public var edgeRawValue: UInt8 { UInt8(Self.allCases.firstIndex(of: self)!) }
}
