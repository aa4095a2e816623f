import Foundation
public import Routing

/// Drives along polylines and reports noisy fixes, for the map matcher's tests.
public enum DrivenPath {
    /// The point `meters` from `start` along `bearing` (flat-earth, fine for a few kilometres).
    public static func destination(from start: RoadCoordinate, bearing: Double, meters: Double) -> RoadCoordinate {
        let radians = bearing * Double.pi / 180, metersPerDegree = 6_371_008.8 * Double.pi / 180
        return RoadCoordinate(
            lat: start.lat + meters * cos(radians) / metersPerDegree,
            lon: start.lon + meters * sin(radians) / (metersPerDegree * cos(start.lat * Double.pi / 180)))
    }

    /// Positions every `spacing` metres along `points` (the last point included), each moved by Gaussian noise of
    /// `noise` metres per axis from a generator seeded with `seed`; fix `i` is taken at `start + i * interval`.
    public static func fixes(
        along points: [RoadCoordinate], spacing: Double, noise: Double, seed: UInt64,
        interval: Double = 1, start: Double = 0
    ) -> [MatchFix] {
        var random = SeededGenerator(seed: seed)
        var positions: [RoadCoordinate] = []
        var carried = 0.0
        for (a, b) in zip(points, points.dropFirst()) {
            let length = distance(a, b)
            var at = carried
            while at < length {
                let t = at / length
                positions.append(RoadCoordinate(lat: a.lat + t * (b.lat - a.lat), lon: a.lon + t * (b.lon - a.lon)))
                at += spacing
            }
            carried = at - length
        }
        if let last = points.last { positions.append(last) }
        return positions.enumerated().map { index, point in
            let north = gaussian(&random) * noise, east = gaussian(&random) * noise
            let moved = destination(
                from: destination(from: point, bearing: 0, meters: north), bearing: 90, meters: east)
            return MatchFix(coordinate: moved, time: start + Double(index) * interval)
        }
    }

    /// A standard normal deviate (Box–Muller).
    public static func gaussian(_ random: inout SeededGenerator) -> Double {
        let u = Double.random(in: Double.ulpOfOne..<1, using: &random), v = Double.random(in: 0..<1, using: &random)
        return (-2 * log(u)).squareRoot() * cos(2 * Double.pi * v)
    }

    /// Great-circle metres, as the road network measures them.
    public static func distance(_ a: RoadCoordinate, _ b: RoadCoordinate) -> Double { RoadNetwork.distance(a, b) }
}
