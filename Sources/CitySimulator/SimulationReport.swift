public import Foundation

/// The run's figures (report.json): computed from the clients' observations and the server's findings only. Its JSON
/// has exactly the top-level keys plus `offersExpired`, `paymentsCaptured`, `paymentsExpected`,
/// `etaHonestyOnTheWay`, `dispatch` and `demand`; a figure without data is null.
public struct SimulationReport: Sendable, Equatable, Encodable {
    /// A median and a tail.
    public struct Spread: Sendable, Equatable, Encodable {
        public var p50: Double?
        public var p99: Double?
        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(p50, forKey: .p50); try c.encode(p99, forKey: .p99)
        }
        enum CodingKeys: String, CodingKey { case p50, p99 }
    }
    /// Mean absolute error and its 90th percentile.
    public struct ErrorSpread: Sendable, Equatable, Encodable {
        public var mae: Double?
        public var p90: Double?
        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(mae, forKey: .mae); try c.encode(p90, forKey: .p90)
        }
        enum CodingKeys: String, CodingKey { case mae, p90 }
    }
    /// Tracking polls per order-minute in each stage.
    public struct PollRates: Sendable, Equatable, Encodable {
        public var picking: Double?
        public var onTheWay: Double?
        public var background: Double?
        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(picking, forKey: .picking); try c.encode(onTheWay, forKey: .onTheWay);
            try c.encode(background, forKey: .background)
        }
        enum CodingKeys: String, CodingKey { case picking, onTheWay, background }
    }

    /// The top-level keys, in the order.
    public static let keys = [
        "tripsCompleted", "etaHonesty", "etaRangeMedianMinutes", "etaErrorSeconds", "staleShownAsLive",
        "snapshotAgeShownSeconds", "outOfOrderDrops", "liveActivityStaleRate", "pollsPerOrderMinute",
        "matchSeconds", "noProviderRate", "stepsLost", "stepsDuplicated", "ledgerBalanced",
        "offersExpired", "paymentsCaptured", "paymentsExpected", "etaHonestyOnTheWay", "dispatch", "demand",
    ]

    public var tripsCompleted: Int
    /// Share of delivered orders whose arrival fell inside the last window shown.
    public var etaHonesty: Double?
    /// Share of the seconds an order was on the way during which the window on screen held its arrival (a stricter
    /// figure than `etaHonesty`, which looks at the last window only).
    public var etaHonestyOnTheWay: Double?
    public var etaRangeMedianMinutes: Double?
    public var etaErrorSeconds: ErrorSpread
    /// Pins drawn as live whose fix was older than 20 s.
    public var staleShownAsLive: Int
    public var snapshotAgeShownSeconds: Spread
    public var outOfOrderDrops: Int
    public var liveActivityStaleRate: Double?
    public var pollsPerOrderMinute: PollRates
    /// Seconds from a ride's request to its driver as the rider saw them, over rides asked for now (a ride booked
    /// ahead is matched late on purpose).
    public var matchSeconds: Spread
    public var noProviderRate: Double?
    /// Steps the server acknowledged (or the device still held) that are not in the change log; nil when unknown.
    public var stepsLost: Int?
    /// Steps in a change log twice (a change id, or a provider's status, repeated); nil when unknown.
    public var stepsDuplicated: Int?
    public var ledgerBalanced: Bool?
    public var offersExpired: Int
    public var paymentsCaptured: Int?
    public var paymentsExpected: Int
    /// Pickup and match times, matched share and empty kilometres under the server's dispatch policy.
    public var dispatch: DispatchFigures
    /// The demand the run was asked for; nil when not said.
    public var demand: DemandFigures?

    /// The figures of `seen` and `server` for a run of `demand`; a pin counts as stale when its fix is older than
    /// `liveFor` seconds.
    public init(
        _ seen: SimulationObservations, server: ServerFindings, demand: DemandFigures? = nil, liveFor: Double = 20
    ) {
        self.demand = demand
        tripsCompleted = seen.ridesCompleted + seen.ordersDelivered
        let windowed = seen.orderArrivals.compactMap { arrival in arrival.lastWindow.map { ($0, arrival.arrival) } }
        etaHonesty =
            windowed.isEmpty ? nil : Double(windowed.filter { $0.0.contains($0.1) }.count) / Double(windowed.count)
        etaRangeMedianMinutes = Self.percentile(
            windowed.map { $0.0.upperBound.timeIntervalSince($0.0.lowerBound) / 60 }, 50)
        var shown = 0, held = 0
        for arrival in seen.orderArrivals {
            for (window, seconds) in arrival.onTheWayWindows {
                shown += seconds
                if window.contains(arrival.arrival) { held += seconds }
            }
        }
        etaHonestyOnTheWay = shown == 0 ? nil : Double(held) / Double(shown)
        var errors = seen.orderArrivals.compactMap { arrival in
            arrival.firstOnTheWayWindow.map { abs(arrival.arrival.timeIntervalSince(Self.middle($0))) }
        }
        errors += seen.rideArrivals.compactMap { ride in ride.promised.map { abs(ride.arrivedAt.timeIntervalSince($0)) }
        }
        etaErrorSeconds = ErrorSpread(
            mae: errors.isEmpty ? nil : errors.reduce(0, +) / Double(errors.count),
            p90: Self.percentile(errors, 90))
        staleShownAsLive = seen.livePinAges.filter { $0 > liveFor }.count
        snapshotAgeShownSeconds = Spread(
            p50: Self.percentile(seen.snapshotAgesShown, 50), p99: Self.percentile(seen.snapshotAgesShown, 99))
        outOfOrderDrops = seen.outOfOrderDrops
        liveActivityStaleRate =
            seen.liveActivityRenders == 0 ? nil : Double(seen.liveActivityStale) / Double(seen.liveActivityRenders)
        func rate(_ stage: SimulationObservations.PollStage) -> Double? {
            let minutes = seen.orderMinutes[stage] ?? 0
            return minutes <= 0 ? nil : Double(seen.polls[stage] ?? 0) / minutes
        }
        pollsPerOrderMinute = PollRates(
            picking: rate(.picking), onTheWay: rate(.onTheWay), background: rate(.background))
        matchSeconds = Spread(p50: Self.percentile(seen.matchSeconds, 50), p99: Self.percentile(seen.matchSeconds, 99))
        noProviderRate = seen.ridesRequested == 0 ? nil : Double(seen.ridesNoProvider) / Double(seen.ridesRequested)
        if let logs = server.providerSteps {
            var lost = seen.unsentSteps, duplicated = 0
            for (trip, acknowledged) in seen.acknowledgedSteps {
                let inLog = Set((logs[trip] ?? []).compactMap(\.changeId))
                lost += Set(acknowledged).subtracting(inLog).count
            }
            for steps in logs.values {
                let ids = steps.compactMap(\.changeId)
                duplicated += ids.count - Set(ids).count
                duplicated += steps.count - Set(steps.map(\.status)).count
            }
            stepsLost = lost; stepsDuplicated = duplicated
        } else {
            stepsLost = nil; stepsDuplicated = nil
        }
        ledgerBalanced = server.ledgerBalanced
        offersExpired = seen.offersExpired
        paymentsExpected = Set(seen.paidTripIDs).count
        paymentsCaptured = server.captured.map { Set(seen.paidTripIDs).intersection($0).count }
        dispatch = DispatchFigures(
            seen, policy: server.dispatchPolicy, windowSeconds: server.dispatchWindowSeconds,
            quoteDemand: server.quoteDemand)
    }

    /// The nearest-rank `p`th percentile, nil for no values.
    public static func percentile(_ values: [Double], _ p: Double) -> Double? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        let rank = Int((p / 100 * Double(sorted.count)).rounded(.up))
        return sorted[min(max(rank, 1), sorted.count) - 1]
    }

    static func middle(_ window: ClosedRange<Date>) -> Date {
        window.lowerBound.addingTimeInterval(window.upperBound.timeIntervalSince(window.lowerBound) / 2)
    }

    enum CodingKeys: String, CodingKey {
        case tripsCompleted, etaHonesty, etaRangeMedianMinutes, etaErrorSeconds, staleShownAsLive,
            snapshotAgeShownSeconds,
            outOfOrderDrops, liveActivityStaleRate, pollsPerOrderMinute, matchSeconds, noProviderRate, stepsLost,
            stepsDuplicated, ledgerBalanced, offersExpired, paymentsCaptured, paymentsExpected, etaHonestyOnTheWay,
            dispatch, demand
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(tripsCompleted, forKey: .tripsCompleted)
        try c.encode(etaHonesty, forKey: .etaHonesty)
        try c.encode(etaRangeMedianMinutes, forKey: .etaRangeMedianMinutes)
        try c.encode(etaErrorSeconds, forKey: .etaErrorSeconds)
        try c.encode(staleShownAsLive, forKey: .staleShownAsLive)
        try c.encode(snapshotAgeShownSeconds, forKey: .snapshotAgeShownSeconds)
        try c.encode(outOfOrderDrops, forKey: .outOfOrderDrops)
        try c.encode(liveActivityStaleRate, forKey: .liveActivityStaleRate)
        try c.encode(pollsPerOrderMinute, forKey: .pollsPerOrderMinute)
        try c.encode(matchSeconds, forKey: .matchSeconds)
        try c.encode(noProviderRate, forKey: .noProviderRate)
        try c.encode(stepsLost, forKey: .stepsLost)
        try c.encode(stepsDuplicated, forKey: .stepsDuplicated)
        try c.encode(ledgerBalanced, forKey: .ledgerBalanced)
        try c.encode(offersExpired, forKey: .offersExpired)
        try c.encode(paymentsCaptured, forKey: .paymentsCaptured)
        try c.encode(paymentsExpected, forKey: .paymentsExpected)
        try c.encode(etaHonestyOnTheWay, forKey: .etaHonestyOnTheWay)
        try c.encode(dispatch, forKey: .dispatch)
        try c.encode(demand, forKey: .demand)
    }

    /// The report as pretty, key-sorted JSON.
    public func json() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return try encoder.encode(self)
    }
}
