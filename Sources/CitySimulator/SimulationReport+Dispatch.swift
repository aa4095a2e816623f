import Foundation

extension SimulationReport {
    /// A mean and a tail.
    public struct MeanSpread: Sendable, Equatable, Encodable {
        public var mean: Double?
        public var p90: Double?
        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(mean, forKey: .mean); try c.encode(p90, forKey: .p90)
        }
        enum CodingKeys: String, CodingKey { case mean, p90 }
    }

    /// How dispatch served the run's requests (rides and orders alike), from the providers' assignments: report.json's
    /// `dispatch`. The policy and window are the server's own (nil when it did not say); a figure without data is nil.
    public struct DispatchFigures: Sendable, Equatable, Encodable {
        /// `greedy` or `batched`.
        public var policy: String?
        /// Seconds a batched window gathers requests; nil for greedy.
        public var windowSeconds: Double?
        /// From a provider's assignment to its arrival at the pickup, over the trips whose provider got there.
        public var pickupSeconds: MeanSpread
        /// From the request's creation to its provider's assignment, over the matched requests asked for now: rides
        /// booked ahead are left out, since their search waits on purpose until shortly before they are due.
        public var matchSeconds: Spread
        /// Share of the run's requests that got a provider.
        public var matchedShare: Double?
        /// Kilometres driven from assignment to the pickup (or to where the approach ended), per matched request.
        public var emptyKmPerTrip: Double?
        /// How the rides booked ahead were served.
        public var scheduled: ScheduledFigures
        /// How many orders were stacked on a courier already carrying one.
        public var stacked: StackedFigures
        /// How often the riders were shown a busy-time price.
        public var surge: SurgeFigures

        /// The keys of report.json's `dispatch`.
        public static let keys = [
            "policy", "windowSeconds", "pickupSeconds", "matchSeconds", "matchedShare", "emptyKmPerTrip", "scheduled",
            "stacked", "surge",
        ]

        /// The figures of `seen`'s requests (`tripIDs`) and their assignments, under the server's `policy`; the
        /// riders' estimates under `quoteDemand`, the server's multiplier by quote id.
        public init(
            _ seen: SimulationObservations, policy: String?, windowSeconds: Double?,
            quoteDemand: [String: Double]? = nil
        ) {
            self.policy = policy
            self.windowSeconds = policy == "greedy" ? nil : windowSeconds
            let requests = Set(seen.tripIDs)
            let matched = requests.compactMap { seen.assignments[$0] }
            let pickups = matched.compactMap { a in a.atPickup.map { $0.timeIntervalSince(a.assignedAt) } }
            pickupSeconds = MeanSpread(
                mean: pickups.isEmpty ? nil : pickups.reduce(0, +) / Double(pickups.count),
                p90: SimulationReport.percentile(pickups, 90))
            let matches = requests.filter { seen.bookedRides[$0] == nil }.compactMap { seen.assignments[$0] }.map {
                $0.assignedAt.timeIntervalSince($0.requestedAt)
            }
            matchSeconds = Spread(
                p50: SimulationReport.percentile(matches, 50), p99: SimulationReport.percentile(matches, 99))
            matchedShare = requests.isEmpty ? nil : Double(matched.count) / Double(requests.count)
            emptyKmPerTrip =
                matched.isEmpty ? nil : matched.map(\.approachMetres).reduce(0, +) / Double(matched.count) / 1000
            scheduled = ScheduledFigures(seen)
            stacked = StackedFigures(seen)
            surge = SurgeFigures(seen, quoteDemand: quoteDemand)
        }

        enum CodingKeys: String, CodingKey {
            case policy, windowSeconds, pickupSeconds, matchSeconds, matchedShare, emptyKmPerTrip, scheduled, stacked,
                surge
        }

        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(policy, forKey: .policy)
            try c.encode(windowSeconds, forKey: .windowSeconds)
            try c.encode(pickupSeconds, forKey: .pickupSeconds)
            try c.encode(matchSeconds, forKey: .matchSeconds)
            try c.encode(matchedShare, forKey: .matchedShare)
            try c.encode(emptyKmPerTrip, forKey: .emptyKmPerTrip)
            try c.encode(scheduled, forKey: .scheduled)
            try c.encode(stacked, forKey: .stacked)
            try c.encode(surge, forKey: .surge)
        }
    }
}
