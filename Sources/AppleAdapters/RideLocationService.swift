#if canImport(SwiftUI) && canImport(MapKit)
import CoreLocation
public import EnRouteModels
public import RideHailing

/// `LocationProviding` over `CLLocationUpdate.liveUpdates()` (seed 002's LocationService).
public struct RideLocationService: LocationProviding {
    /// A service over the system's location updates.
    public init() {}

    /// The first live update at least as accurate as `accuracy` metres.
    public func currentLocation(accuracy: Double) async throws -> Coordinate {
        for try await update in CLLocationUpdate.liveUpdates() {
            if let location = update.location, location.horizontalAccuracy >= 0, location.horizontalAccuracy <= accuracy {
                return Coordinate(lat: location.coordinate.latitude, lng: location.coordinate.longitude)
            }
        }
        throw LocationError.unavailable
    }
}
#endif
