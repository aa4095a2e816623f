// Apple platforms only: CoreLocation's updates as the client kit's location readings. No logic.
#if canImport(CoreLocation)
import CoreLocation
import ClientKit
import EnRouteModels
import RideHailing

extension LocationReading {
    /// An update as iOS 18 and macOS 15 describe it, with their own denial and unavailability flags; nil while the
    /// authorization prompt is on screen (that update carries no answer yet).
    @available(iOS 18.0, macOS 15.0, *)
    init?(_ update: CLLocationUpdate) {
        guard !update.authorizationRequestInProgress else { return nil }
        self.init(
            coordinate: update.location.map { Coordinate($0) },
            horizontalAccuracy: update.location?.horizontalAccuracy ?? -1,
            authorizationDenied: update.authorizationDenied || update.authorizationDeniedGlobally
                || update.authorizationRestricted,
            locationUnavailable: update.locationUnavailable)
    }

    /// An update from before iOS 18, which carries no such flags: `denied` comes from the location manager, and an
    /// update without a position counts against the policy's limit by itself.
    init(_ update: CLLocationUpdate, denied: Bool) {
        self.init(
            coordinate: update.location.map { Coordinate($0) },
            horizontalAccuracy: update.location?.horizontalAccuracy ?? -1,
            authorizationDenied: denied, locationUnavailable: false)
    }
}

extension LocationReadingPolicy {
    /// The position `reading` settles on, or nil to keep waiting; throws the `LocationError` that ends the wait.
    mutating func coordinate(for reading: LocationReading) throws -> Coordinate? {
        let decision = decide(reading)
        if case .use(let coordinate) = decision { return coordinate }
        if let error = LocationError(decision) { throw error }
        return nil
    }
}

extension Coordinate {
    /// The position of a CoreLocation fix.
    init(_ location: CLLocation) {
        self.init(lat: location.coordinate.latitude, lng: location.coordinate.longitude)
    }
}
#endif
