import Foundation
import EnRouteModels

extension Coordinate {
    /// Great-circle distance in metres (haversine, mean Earth radius).
    func distance(to other: Coordinate) -> Double {
        let radians = Double.pi / 180
        let dLat = (other.lat - lat) * radians, dLng = (other.lng - lng) * radians
        let a =
            sin(dLat / 2) * sin(dLat / 2) + cos(lat * radians) * cos(other.lat * radians) * sin(dLng / 2)
            * sin(dLng / 2)
        return 6_371_000 * 2 * atan2(sqrt(a), sqrt(1 - a))
    }

    /// Initial bearing towards `other`, degrees clockwise from north in 0..<360.
    func bearing(to other: Coordinate) -> Double {
        let radians = Double.pi / 180
        let y = sin((other.lng - lng) * radians) * cos(other.lat * radians)
        let x =
            cos(lat * radians) * sin(other.lat * radians) - sin(lat * radians) * cos(other.lat * radians)
            * cos((other.lng - lng) * radians)
        let degrees = atan2(y, x) / radians
        return degrees < 0 ? degrees + 360 : degrees
    }

    /// The point `fraction` of the way to `other` (linear in degrees; fine for city-scale legs).
    func interpolated(to other: Coordinate, fraction: Double) -> Coordinate {
        Coordinate(lat: lat + (other.lat - lat) * fraction, lng: lng + (other.lng - lng) * fraction)
    }
}
