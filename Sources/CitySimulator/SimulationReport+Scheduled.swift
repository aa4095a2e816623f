public import Foundation

extension SimulationReport {
    /// How rides booked ahead were served, from the riders' bookings and the providers' assignments: report.json's
    /// `dispatch.scheduled`. With no ride booked the count is 0 and the shares are null.
    public struct ScheduledFigures: Sendable, Equatable, Encodable {
        /// Booked rides requested (trips created with a `scheduledFor`).
        public var count: Int
        /// Share of the booked rides whose provider was assigned at or before `scheduledFor`.
        public var matchedBeforeDueShare: Double?
        /// Share of the booked rides whose provider reached the pickup within `onTimeSeconds` of `scheduledFor`,
        /// early or late.
        public var onTimeShare: Double?

        /// How far from `scheduledFor` an arrival at the pickup still counts as on time, either way.
        public static let onTimeSeconds: TimeInterval = 300

        /// The keys of report.json's `dispatch.scheduled`.
        public static let keys = ["count", "matchedBeforeDueShare", "onTimeShare"]

        /// The figures of `seen`'s booked rides among its requests (`tripIDs`).
        public init(_ seen: SimulationObservations) {
            let booked = Set(seen.tripIDs).compactMap { id in seen.bookedRides[id].map { (id, $0.scheduledFor) } }
            count = booked.count
            let beforeDue = booked.filter { id, due in seen.assignments[id].map { $0.assignedAt <= due } ?? false }
            let onTime = booked.filter { id, due in
                guard let atPickup = seen.assignments[id]?.atPickup else { return false }
                return abs(atPickup.timeIntervalSince(due)) <= Self.onTimeSeconds
            }
            matchedBeforeDueShare = count == 0 ? nil : Double(beforeDue.count) / Double(count)
            onTimeShare = count == 0 ? nil : Double(onTime.count) / Double(count)
        }

        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(count, forKey: .count)
            try c.encode(matchedBeforeDueShare, forKey: .matchedBeforeDueShare)
            try c.encode(onTimeShare, forKey: .onTimeShare)
        }
        enum CodingKeys: String, CodingKey { case count, matchedBeforeDueShare, onTimeShare }
    }

    /// Why booked rides missed the goals: the rides never assigned, by how they ended; the rides assigned after they
    /// were due; and the assigned rides whose provider did not reach the pickup within `onTimeSeconds`, by how.
    public struct ScheduledMisses: Sendable, Equatable {
        /// Never assigned, cancelled (the card refused when the search began, or the rider).
        public var cancelledUnmatched = 0
        /// Never assigned, ended without a provider.
        public var noProvider = 0
        /// Never assigned, still waiting when the run ended.
        public var unfinished = 0
        /// Assigned after `scheduledFor` (such a ride may still arrive on time).
        public var matchedLate = 0
        /// Assigned, but never reached the pickup (the trip was cancelled or the run ended on the way).
        public var neverAtPickup = 0
        /// Reached the pickup more than `onTimeSeconds` before `scheduledFor`.
        public var arrivedEarly = 0
        /// Reached the pickup more than `onTimeSeconds` after `scheduledFor`.
        public var arrivedLate = 0

        /// The misses among `seen`'s booked rides.
        public init(_ seen: SimulationObservations) {
            for id in Set(seen.tripIDs) {
                guard let booked = seen.bookedRides[id] else { continue }
                let due = booked.scheduledFor
                guard let assignment = seen.assignments[id] else {
                    switch booked.ended {
                    case .cancelled?: cancelledUnmatched += 1
                    case .noDriversFound?: noProvider += 1
                    default: unfinished += 1
                    }
                    continue
                }
                if assignment.assignedAt > due { matchedLate += 1 }
                guard let atPickup = assignment.atPickup else {
                    neverAtPickup += 1
                    continue
                }
                let offset = atPickup.timeIntervalSince(due)
                if offset < -ScheduledFigures.onTimeSeconds { arrivedEarly += 1 }
                if offset > ScheduledFigures.onTimeSeconds { arrivedLate += 1 }
            }
        }
    }
}

extension SimulationReport {
    /// One row per ride booked ahead, times in seconds relative to its `scheduledFor` (negative: before it): when its
    /// search began, when its provider was assigned and reached the pickup (empty: never or not seen), and the state
    /// it ended in. For finding why a booked ride missed its time.
    public static func bookedCSV(_ seen: SimulationObservations) -> String {
        var lines = ["trip,searchBegan,assigned,atPickup,ended"], listed = Set<String>()
        for id in seen.tripIDs {
            guard let booked = seen.bookedRides[id], listed.insert(id).inserted else { continue }
            func rel(_ date: Date?) -> String {
                date.map { String(format: "%.0f", $0.timeIntervalSince(booked.scheduledFor)) } ?? ""
            }
            let assignment = seen.assignments[id]
            lines.append(
                [
                    id, rel(booked.matchingStartedAt), rel(assignment?.assignedAt), rel(assignment?.atPickup),
                    booked.ended?.rawValue ?? "",
                ].joined(separator: ","))
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
