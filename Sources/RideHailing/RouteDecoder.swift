public import Foundation
public import EnRouteModels
import ClientKit

/// Reads a route polyline: a JSON array of `{"lat", "lng"}`.
public enum RouteDecoder {
    /// The polyline's points, in order.
    public static func decode(_ data: Data) throws -> [Coordinate] {
        try WireCoding.decoder().decode([Coordinate].self, from: data)
    }

    /// The JSON for a polyline.
    public static func encode(_ route: [Coordinate]) throws -> Data {
        try WireCoding.encoder().encode(route)
    }
}
