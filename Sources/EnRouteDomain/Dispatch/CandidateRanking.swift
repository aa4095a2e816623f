public import EnRouteModels
public import Foundation

/// A provider who could take a trip: where they are and how far from the pickup in a straight line.
public struct DispatchCandidate: Sendable, Equatable {
    public let providerId: String
    public let position: Coordinate
    /// Straight-line metres to the pickup.
    public let distance: Double
    public init(providerId: String, position: Coordinate, distance: Double) {
        self.providerId = providerId; self.position = position; self.distance = distance
    }
}

/// Orders a shortlist of nearby candidates for an offer, best first. Straight-line distance today;
/// the routing issue ranks by road ETA behind the same protocol.
public protocol CandidateRanking: Sendable {
    func rank(_ candidates: [DispatchCandidate], pickup: Coordinate) async -> [DispatchCandidate]
}

/// The nearest candidate first, ties broken by provider id so that the order is reproducible.
public struct StraightLineRanking: CandidateRanking {
    public init() {}
    public func rank(_ candidates: [DispatchCandidate], pickup: Coordinate) async -> [DispatchCandidate] {
        candidates.sorted { ($0.distance, $0.providerId) < ($1.distance, $1.providerId) }
    }
}

/// The candidate with the least road time to the pickup first (one table query over the shortlist), ties and those
/// no road joins to the pickup after, in straight-line order; the straight-line order whole when the table fails.
public struct RoadRanking: CandidateRanking {
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
        guard straight.count > 1 else { return straight }
        let table: [[RoadCost?]]
        do {
            table = try await roads.table(sources: straight.map(\.position), destinations: [pickup], departure: now())
        } catch {
            metrics.increment(
                "enroute_dispatch_ranking_fallback_total", labels: [:],
                help: "Shortlists ranked in a straight line because the road table failed.")
            return straight
        }
        let seconds = straight.indices.map { i in
            (i < table.count ? table[i].first ?? nil : nil)?.durationSeconds ?? .infinity
        }
        return straight.indices.sorted { (seconds[$0], $0) < (seconds[$1], $1) }.map { straight[$0] }
    }
}
