public import Foundation
public import EnRouteModels

/// How final prices are measured: the map-matched path when roads are configured, else the stored path's length.
public struct PathMeasurement: TripMeasurement {
    let paths: any PathStore
    let hasRoads: Bool
    /// How much closer to the pickup a provider must have come, in metres, to count as on the way.
    public static let progressMeters = 100.0

    /// Measures on `paths`; with `hasRoads`, a trip's map-matched path is waited for until the last try.
    public init(paths: any PathStore, hasRoads: Bool) {
        self.paths = paths
        self.hasRoads = hasRoads
    }

    public func measured(_ trip: TripRecord, final: Bool) async -> TripMeasured {
        if let d = trip.matchedDistanceMeters, let t = trip.matchedDurationSeconds {
            return .value(distanceMeters: d, durationSeconds: t)
        }
        guard let points = try? await paths.path(tripId: trip.id), points.count > 1, let first = points.first,
            let last = points.last
        else { return .none }
        // The match is made just after completion: wait for it, unless this is the last try.
        if hasRoads && !final { return .pending }
        let metres = zip(points, points.dropFirst()).reduce(0.0) { sum, pair in
            sum
                + StraightLineEstimator.distance(
                    Coordinate(lat: pair.0.lat, lng: pair.0.lng), Coordinate(lat: pair.1.lat, lng: pair.1.lng))
        }
        return .value(distanceMeters: metres, durationSeconds: last.recordedAt.timeIntervalSince(first.recordedAt))
    }

    public func providerProgressed(_ trip: TripRecord, since assignedAt: Date) async -> Bool {
        guard let points = try? await paths.path(tripId: trip.id) else { return false }
        let after = points.filter { $0.recordedAt >= assignedAt }
        guard let first = after.first, let last = after.last else { return false }
        let start = StraightLineEstimator.distance(Coordinate(lat: first.lat, lng: first.lng), trip.pickup)
        let now = StraightLineEstimator.distance(Coordinate(lat: last.lat, lng: last.lng), trip.pickup)
        // Closer to the pickup than when the provider took the trip by at least `progressMeters`.
        return start - now >= Self.progressMeters
    }
}
