public import EnRouteModels

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
