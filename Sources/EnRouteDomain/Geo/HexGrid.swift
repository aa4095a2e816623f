public import EnRouteModels
import Foundation

/// A cell of the zone grid: a hexagon in axial coordinates within a one-degree band of latitude.
public struct HexCell: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The whole degree of latitude the cell's band starts at.
    public let band: Int
    public let q: Int
    public let r: Int

    public init(band: Int, q: Int, r: Int) { self.band = band; self.q = q; self.r = r }

    /// `band/q/r`, the cell's name on the wire and in the console.
    public var description: String { "\(band)/\(q)/\(r)" }
}

/// Hexagons of equal size over the map, for counting supply and demand by zone.
///
/// Each one-degree band of latitude is projected flat at its middle latitude (metres east and north of 0°, 0°), and
/// tiled with pointy-topped hexagons `across` metres between opposite sides. Within a band a hexagon's size is true to
/// within the cosine's change over half a degree (under 1 % below 60°); at a whole degree of latitude the tiling starts
/// again, so a zone never straddles one.
public struct HexGrid: Sendable, Equatable {
    /// Metres between opposite sides of a hexagon.
    public let across: Double

    /// Hexagons `across` metres wide (about a kilometre by default).
    public init(across: Double = 1_000) { self.across = across }

    static let metresPerDegreeLat = 110_574.0
    static let metresPerDegreeLngAtEquator = 111_320.0

    /// Centre to corner.
    var size: Double { across / 3.0.squareRoot() }

    /// The cell holding `point`.
    public func cell(of point: Coordinate) -> HexCell {
        let band = Int(point.lat.rounded(.down))
        let x = point.lng * Self.eastScale(band), y = point.lat * Self.metresPerDegreeLat
        let q = (3.0.squareRoot() / 3 * x - y / 3) / size, r = (2.0 / 3 * y) / size
        return Self.round(band: band, q: q, r: r)
    }

    /// The centre of `cell`.
    public func centre(of cell: HexCell) -> Coordinate {
        let x = size * 3.0.squareRoot() * (Double(cell.q) + Double(cell.r) / 2)
        let y = size * 1.5 * Double(cell.r)
        return Coordinate(lat: y / Self.metresPerDegreeLat, lng: x / Self.eastScale(cell.band))
    }

    /// The six cells that share a side with `cell`.
    public func neighbours(of cell: HexCell) -> [HexCell] {
        [(1, 0), (1, -1), (0, -1), (-1, 0), (-1, 1), (0, 1)].map {
            HexCell(band: cell.band, q: cell.q + $0.0, r: cell.r + $0.1)
        }
    }

    /// Metres east per degree of longitude in the band's middle.
    static func eastScale(_ band: Int) -> Double {
        metresPerDegreeLngAtEquator * cos((Double(band) + 0.5) * .pi / 180)
    }

    /// The hexagon holding fractional axial coordinates: each cube coordinate rounded, the one that moved most fixed.
    static func round(band: Int, q: Double, r: Double) -> HexCell {
        let s = -q - r
        var rq = q.rounded(), rr = r.rounded()
        let rs = s.rounded()
        let dq = abs(rq - q), dr = abs(rr - r), ds = abs(rs - s)
        if dq > dr && dq > ds {
            rq = -rr - rs
        } else if dr > ds {
            rr = -rq - rs
        }
        return HexCell(band: band, q: Int(rq), r: Int(rr))
    }
}
