// Apple platforms only: the rider's position for the pickup, over CoreLocation. No logic.
#if canImport(CoreLocation)
import CoreLocation
import ClientKit
public import EnRouteModels
public import RideHailing

/// `LocationProviding` over `CLLocationUpdate.liveUpdates()`, judged reading by reading by `LocationReadingPolicy`.
///
/// Needs `NSLocationWhenInUseUsageDescription`. On iOS 18 and macOS 15 the updates ask for When In Use themselves
/// and say when location is denied or unavailable; before that the location manager asks, and its status ends the
/// wait as soon as location is denied.
public struct RideLocationService: LocationProviding {
    private let unavailableLimit: Int

    /// A service that gives up after `unavailableLimit` updates in a row without a position.
    public init(unavailableLimit: Int = 5) {
        self.unavailableLimit = unavailableLimit
    }

    /// The first position within `accuracy` metres; throws `LocationError.denied` when location is denied and
    /// `LocationError.unavailable` when updates keep coming without one.
    public func currentLocation(accuracy: Double) async throws -> Coordinate {
        let policy = LocationReadingPolicy(accuracy: accuracy, unavailableLimit: unavailableLimit)
        if #available(iOS 18.0, macOS 15.0, *) {
            var reader = policy
            for try await update in CLLocationUpdate.liveUpdates() {
                guard let reading = LocationReading(update) else { continue }
                if let coordinate = try reader.coordinate(for: reading) { return coordinate }
            }
            throw LocationError.unavailable
        }
        let authorization = await MainActor.run { LocationAuthorization() }
        if await authorization.request(.whenInUse) { throw LocationError.denied }
        return try await authorization.failingOnDenial {
            var reader = policy
            for try await update in CLLocationUpdate.liveUpdates() {
                let reading = LocationReading(update, denied: await authorization.isDenied)
                if let coordinate = try reader.coordinate(for: reading) { return coordinate }
            }
            throw LocationError.unavailable
        }
    }
}
#endif
