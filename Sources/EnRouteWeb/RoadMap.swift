public import Routing
import Foundation
import Synchronization

/// The city's roads for the browser maps, drawn from the loaded road graph instead of a tile server:
/// GeoJSON LineStrings (one per street segment, both directions once) with their road class, encoded once and cached.
public final class RoadMap: Sendable {
    /// Above this many segments the smallest classes (service roads, living streets) are left out.
    public static let segmentBudget = 60_000

    private let network: RoadNetwork
    private let classNames: [String]
    private let encoded = Mutex<[UInt8]?>(nil)

    /// The map of `network`; `roadClassName` names a raw `edgeRoadClass` value (the builder's `RoadClass.allCases`
    /// order by default).
    public init(network: RoadNetwork) {
        self.network = network
        classNames = RoadClass.allCases.map(\.rawValue)
    }

    /// The GeoJSON bytes, encoded on first use.
    public func geoJSON() -> [UInt8] {
        if let hit = encoded.withLock({ $0 }) { return hit }
        let bytes = Self.encode(network, classNames: classNames)
        encoded.withLock { $0 = bytes }
        return bytes
    }

    static func encode(_ network: RoadNetwork, classNames: [String]) -> [UInt8] {
        let minor: Set<String> = ["service", "living_street"]
        var seen = Set<SegmentKey>()
        var kept: [Int32] = []
        for edge in 0..<Int32(network.edgeCount) {
            let from = network.edgeFrom[Int(edge)], to = network.edgeTo[Int(edge)]
            let count = Int(network.geometryStart[Int(edge) + 1] - network.geometryStart[Int(edge)])
            // The reverse direction of a two-way street has the same points backwards: draw it once.
            if seen.insert(SegmentKey(a: min(from, to), b: max(from, to), points: count)).inserted { kept.append(edge) }
        }
        let dropMinor = kept.count > segmentBudget
        var out = Array(
            #"{"type":"FeatureCollection","attribution":"© OpenStreetMap contributors, ODbL","features":["#.utf8)
        var first = true
        var south = 90.0, west = 180.0, north = -90.0, east = -180.0
        for edge in kept {
            let raw = Int(network.edgeRoadClass[Int(edge)])
            let name = raw < classNames.count ? classNames[raw] : "unclassified"
            if dropMinor, minor.contains(name) { continue }
            if !first { out.append(UInt8(ascii: ",")) }
            first = false
            out += Array(#"{"type":"Feature","properties":{"class":""#.utf8) + Array(name.utf8)
            out += Array(#""},"geometry":{"type":"LineString","coordinates":["#.utf8)
            let range = Int(network.geometryStart[Int(edge)])..<Int(network.geometryStart[Int(edge) + 1])
            for (i, p) in range.enumerated() {
                let lat = network.geometryLats[p], lon = network.geometryLons[p]
                south = min(south, lat); north = max(north, lat); west = min(west, lon); east = max(east, lon)
                if i > 0 { out.append(UInt8(ascii: ",")) }
                out += Array("[\(Self.fixed(lon)),\(Self.fixed(lat))]".utf8)
            }
            out += Array("]}}".utf8)
        }
        out += Array("]".utf8)
        if !first {
            out += Array(
                ",\"bbox\":[\(Self.fixed(west)),\(Self.fixed(south)),\(Self.fixed(east)),\(Self.fixed(north))]".utf8)
        }
        out += Array("}".utf8)
        return out
    }

    /// Six decimals (about 10 cm), the precision a street map needs.
    static func fixed(_ value: Double) -> String {
        let scaled = (value * 1_000_000).rounded()
        let sign = scaled < 0 ? "-" : ""
        let magnitude = Int64(abs(scaled))
        let fraction = String(magnitude % 1_000_000)
        return "\(sign)\(magnitude / 1_000_000).\(String(repeating: "0", count: 6 - fraction.count))\(fraction)"
    }

    private struct SegmentKey: Hashable {
        let a: Int32, b: Int32, points: Int
    }
}
