public import Foundation
public import EnRouteModels
public import EnRouteLogging

/// At completion a trip's kept path is matched onto the roads, and the match's distance and time kept on the trip:
/// the measurement the final price rests on (`PathMeasurement`).
public struct CompletedPathMatching: Sendable {
    let roads: any RoadRouting
    let paths: any PathStore
    let log: Logger

    /// Matches on `roads` the paths kept in `paths`.
    public init(roads: any RoadRouting, paths: any PathStore, log: Logger) {
        self.roads = roads; self.paths = paths; self.log = log
    }

    /// Whether a committed change asks for a match: the trip just ended completed or delivered.
    public static func isCompletion(from old: TripRecord?, to new: TripRecord) -> Bool {
        (old?.status.isActive ?? false) && (new.status == .ride(.completed) || new.status == .delivery(.delivered))
    }

    /// Matches the kept path of `tripId` (two fixes at least) and records it on the trip in `service`.
    public func match(_ tripId: String, into service: TripService) async {
        do {
            let points = try await paths.path(tripId: tripId)
            guard points.count > 1 else { return }
            let fixes = points.map {
                RoadFix(
                    coordinate: Coordinate(lat: $0.lat, lng: $0.lng), heading: $0.heading >= 0 ? $0.heading : nil,
                    recordedAt: $0.recordedAt)
            }
            let matched = try await roads.match(fixes)
            try await service.recordMatchedPath(
                of: tripId, distanceMeters: matched.distanceMeters.rounded(),
                durationSeconds: matched.durationSeconds.rounded())
        } catch {
            log.warning("roads: could not match the path of trip \(tripId): \(error)")
        }
    }
}
