#if canImport(SwiftUI) && canImport(MapKit)
import CoreLocation
import EnRouteModels

extension Coordinate {
    /// The same point as MapKit and CoreLocation spell it.
    var locationCoordinate: CLLocationCoordinate2D { CLLocationCoordinate2D(latitude: lat, longitude: lng) }
}
#endif
