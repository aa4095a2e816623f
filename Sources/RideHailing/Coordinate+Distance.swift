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
}
