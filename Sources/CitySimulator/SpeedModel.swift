import Foundation
public import EnRouteModels

/// How fast simulated vehicles really drive compared with the router: a factor per road (seeded, the same road is
/// always as fast) times a factor for the hour of the day (rush hours slower, nights faster).
public struct SpeedModel: Sendable {
    /// The seed behind every road's factor.
    public let seed: UInt64
    /// The spread of road factors: each is uniform in 1 ± spread.
    public let spread: Double

    /// A model over `seed` whose road factors lie within 1 ± `spread`.
    public init(seed: UInt64, spread: Double = 0.2) { self.seed = seed; self.spread = spread }

    /// The factor of the road between two points (rounded to ~10 m, either direction), in 1 ± spread.
    public func roadFactor(from a: Coordinate, to b: Coordinate) -> Double {
        let key = [Self.cell(a), Self.cell(b)].sorted().joined(separator: "|")
        var generator = SeededGenerator(seed: seed, stream: key)
        return 1 - spread + 2 * spread * generator.unit()
    }

    /// The factor for a local hour of the day 0..<24: 0.8 in the morning and evening rush, 1.1 at night, else 1.
    public static func hourFactor(_ hour: Int) -> Double {
        switch hour {
        case 7...9, 16...18: 0.8
        case 0...5, 22...23: 1.1
        default: 1.0
        }
    }

    /// The speed actually driven, in m/s, where the router expects `routerSpeed` on the road from `a` to `b` at `hour`.
    public func speed(router routerSpeed: Double, from a: Coordinate, to b: Coordinate, hour: Int) -> Double {
        routerSpeed * roadFactor(from: a, to: b) * Self.hourFactor(hour)
    }

    private static func cell(_ c: Coordinate) -> String {
        "\(Int((c.lat * 10_000).rounded())),\(Int((c.lng * 10_000).rounded()))"
    }
}

/// GPS noise on a fix: a normal offset of `sigmaMeters` in each axis, seeded per device.
public struct GPSNoise: Sendable {
    /// The standard deviation of the offset in each axis, in metres.
    public let sigmaMeters: Double
    private var generator: SeededGenerator

    /// Noise of `sigmaMeters` drawn from `generator`.
    public init(sigmaMeters: Double, generator: SeededGenerator) {
        self.sigmaMeters = sigmaMeters; self.generator = generator
    }

    /// `point` moved by one draw of the noise.
    public mutating func apply(to point: Coordinate) -> Coordinate {
        let north = generator.gaussian() * sigmaMeters, east = generator.gaussian() * sigmaMeters
        let metersPerDegree = 111_320.0
        let cosLat = max(0.01, cos(point.lat * Double.pi / 180))
        return Coordinate(lat: point.lat + north / metersPerDegree, lng: point.lng + east / (metersPerDegree * cosLat))
    }
}
