import Foundation
import EnRouteModels

extension Coordinate {
    /// Great-circle metres to `other` (haversine).
    func metres(to other: Coordinate) -> Double {
        let r = 6_371_000.0, rad = Double.pi / 180
        let dLat = (other.lat - lat) * rad, dLng = (other.lng - lng) * rad
        let h = sin(dLat / 2) * sin(dLat / 2) + cos(lat * rad) * cos(other.lat * rad) * sin(dLng / 2) * sin(dLng / 2)
        return 2 * r * asin(min(1, h.squareRoot()))
    }
}
