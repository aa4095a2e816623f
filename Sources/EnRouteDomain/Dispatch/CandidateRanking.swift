public import EnRouteModels
public import Foundation

/// A provider who could take a trip: where they are and how far from the pickup in a straight line.
public struct DispatchCandidate: Sendable, Equatable {
    public let providerId: String
    public let position: Coordinate
    /// Straight-line metres to the pickup.
    public let distance: Double
    /// A courier already carrying an order: the route over it and the order offered.
    public var stops: [PlannedStop]? = nil
    /// With `stops`: the most seconds they add to an order the courier carries, as planned.
    public var addedSeconds: Double? = nil
    public init(providerId: String, position: Coordinate, distance: Double) {
        self.providerId = providerId; self.position = position; self.distance = distance
    }
}

/// Orders a shortlist of nearby candidates for an offer, best first. Straight-line distance today;
/// the routing issue ranks by road ETA behind the same protocol.
public protocol CandidateRanking: Sendable {
    func rank(_ candidates: [DispatchCandidate], pickup: Coordinate) async -> [DispatchCandidate]
    /// Each candidate's seconds to the pickup, in the order given: what batched matching minimises in total.
    func pickupSeconds(_ candidates: [DispatchCandidate], pickup: Coordinate) async -> [Double]
    /// Seconds from each of `points` to each: what a courier's route over several stops is planned on.
    func travelTable(_ points: [Coordinate]) async -> [[Double]]
}

extension CandidateRanking {
    /// A ranking that knows no times: each candidate's place in `rank`'s order, as if a second apart.
    public func pickupSeconds(_ candidates: [DispatchCandidate], pickup: Coordinate) async -> [Double] {
        let order = await rank(candidates, pickup: pickup).map(\.providerId)
        return candidates.map { c in Double(order.firstIndex(of: c.providerId) ?? order.count) }
    }

    /// Straight lines at `StraightLineRanking.metresPerSecond`.
    public func travelTable(_ points: [Coordinate]) async -> [[Double]] {
        StraightLineRanking.table(points)
    }
}

/// The nearest candidate first, ties broken by provider id so that the order is reproducible.
public struct StraightLineRanking: CandidateRanking {
    /// The speed a straight line is taken at when it stands for a road time: 30 km/h.
    public static let metresPerSecond = 30 / 3.6

    public init() {}
    public func rank(_ candidates: [DispatchCandidate], pickup: Coordinate) async -> [DispatchCandidate] {
        candidates.sorted { ($0.distance, $0.providerId) < ($1.distance, $1.providerId) }
    }

    public func pickupSeconds(_ candidates: [DispatchCandidate], pickup: Coordinate) async -> [Double] {
        candidates.map { $0.distance / Self.metresPerSecond }
    }

    /// Straight-line seconds between every two of `points`.
    static func table(_ points: [Coordinate]) -> [[Double]] {
        points.map { a in points.map { b in StraightLineEstimator.distance(a, b) / metresPerSecond } }
    }
}

/// The candidate with the least road time to the pickup first (one table query over the shortlist), ties and those
/// no road joins to the pickup after, in straight-line order; the straight-line order whole when the table fails.
public struct RoadRanking: CandidateRanking {
    /// What `pickupSeconds` adds to the straight line's seconds for a candidate no road joins to the pickup.
    public static let noRoadPenalty: Double = 86_400
    /// The road network asked.
    public let roads: any RoadRouting
    /// The order used when the roads cannot answer.
    public let fallback = StraightLineRanking()
    private let now: @Sendable () -> Date
    private let metrics: any MetricsSink

    /// A ranking on `roads` at the service's time `now`.
    public init(roads: any RoadRouting, now: @escaping @Sendable () -> Date, metrics: any MetricsSink = NoMetrics()) {
        self.roads = roads; self.now = now; self.metrics = metrics
    }

    public func rank(_ candidates: [DispatchCandidate], pickup: Coordinate) async -> [DispatchCandidate] {
        let straight = await fallback.rank(candidates, pickup: pickup)
        guard straight.count > 1, let seconds = await roadSeconds(straight, pickup: pickup) else { return straight }
        return straight.indices.sorted {
            (seconds[$0] ?? .infinity, $0) < (seconds[$1] ?? .infinity, $1)
        }.map { straight[$0] }
    }

    /// Road seconds where a road joins the candidate to the pickup; where none does, or the table failed, the straight
    /// line's seconds after a day's penalty, so that every road-joined candidate comes first.
    public func pickupSeconds(_ candidates: [DispatchCandidate], pickup: Coordinate) async -> [Double] {
        let straight = await fallback.pickupSeconds(candidates, pickup: pickup)
        guard !candidates.isEmpty, let seconds = await roadSeconds(candidates, pickup: pickup) else { return straight }
        return candidates.indices.map { seconds[$0] ?? Self.noRoadPenalty + straight[$0] }
    }

    /// One table query between the points; where no road joins two, or the table failed, the straight line's seconds
    /// after a day's penalty.
    public func travelTable(_ points: [Coordinate]) async -> [[Double]] {
        let straight = StraightLineRanking.table(points)
        let table = try? await roads.table(sources: points, destinations: points, departure: now())
        return points.indices.map { i in
            points.indices.map { j in
                let road = table.flatMap { i < $0.count && j < $0[i].count ? $0[i][j] : nil }
                return road?.durationSeconds ?? (i == j ? 0 : Self.noRoadPenalty + straight[i][j])
            }
        }
    }

    /// One table query: each candidate's road seconds to the pickup, nil where no road joins them; nil when it failed.
    func roadSeconds(_ candidates: [DispatchCandidate], pickup: Coordinate) async -> [Double?]? {
        let table: [[RoadCost?]]
        do {
            table = try await roads.table(sources: candidates.map(\.position), destinations: [pickup], departure: now())
        } catch {
            metrics.increment(
                "enroute_dispatch_ranking_fallback_total", labels: [:],
                help: "Shortlists ranked in a straight line because the road table failed.")
            return nil
        }
        return candidates.indices.map { i in (i < table.count ? table[i].first ?? nil : nil)?.durationSeconds }
    }
}
