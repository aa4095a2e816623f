import EnRouteDomain
import EnRouteModels
import Foundation

/// Cities.load on arbitrary bytes (the `--cities` GeoJSON file). Properties: a file that loads has at least one city,
/// each with a unique name of 1 to 64 letters, digits, `-` and `_`, at least one polygon, every ring closed with at
/// least four positions within the globe's ranges, each position two JSON numbers in the file (not booleans or
/// strings); the cities written back out as GeoJSON load as the same cities; a ring's first position lies in its
/// city's box, and a point outside every box is in no city.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCitiesGeoJSON(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = Data(bytes: data, count: size)
    guard let cities = try? Cities.load(geoJSON: input) else { return 0 }
    property(!cities.all.isEmpty && Set(cities.names).count == cities.all.count, "names \(cities.names)")
    for city in cities.all {
        property(
            !city.name.isEmpty && city.name.utf8.count <= 64 && city.name.utf8.allSatisfy(isNameByte), "\(city.name)")
        property(!city.polygons.isEmpty, "\(city.name) has no polygon")
        for ring in city.polygons.flatMap({ [$0.outer] + $0.holes }) {
            property(ring.count >= 4 && ring.first == ring.last, "\(city.name): an open or short ring")
            property(ring.allSatisfy(\.isValid), "\(city.name): a position outside the globe")
        }
    }
    checkPositionsAreNumbers(input)
    let written = geoJSON(cities)
    do {
        let again = try Cities.load(geoJSON: Data(written.utf8))
        property(again == cities, "the cities written out load differently: \(written)")
    } catch {
        property(false, "the cities written out do not load (\(error)): \(written)")
    }
    let outside = Coordinate(lat: 90, lng: 180)
    let boxes = cities.all.flatMap { $0.polygons.map(\.outer) }.flatMap { $0 }
    if !boxes.contains(where: { $0.lat == 90 || $0.lng == 180 }) {
        property(cities.city(containing: outside) == nil, "the globe's corner is in a city")
    }
    return 0
}

private func isNameByte(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
        UInt8(ascii: "0")...UInt8(ascii: "9"),
        UInt8(ascii: "-"), UInt8(ascii: "_"):
        true
    default: false
    }
}

/// Walks the document again on its own and checks that every position's first two members are JSON numbers.
private func checkPositionsAreNumbers(_ input: Data) {
    guard let root = try? JSONSerialization.jsonObject(with: input) as? [String: Any],
        let features = root["features"] as? [[String: Any]]
    else { return }
    for feature in features {
        guard let geometry = feature["geometry"] as? [String: Any] else { continue }
        let polygons: [Any]
        switch geometry["type"] as? String {
        case "Polygon": polygons = [geometry["coordinates"] as Any]
        case "MultiPolygon": polygons = geometry["coordinates"] as? [Any] ?? []
        default: continue
        }
        for polygon in polygons {
            for ring in polygon as? [Any] ?? [] {
                for position in ring as? [Any] ?? [] {
                    guard let pair = position as? [Any] else { continue }
                    // JSON's true and false are NSNumbers of a class of their own (`is Bool` holds for 0 and 1 too).
                    for member in pair.prefix(2) where member is NSNumber {
                        property(
                            type(of: member) != type(of: NSNumber(value: true)),
                            "a position member \(member) is a boolean")
                    }
                }
            }
        }
    }
}

/// The cities as a FeatureCollection: a Polygon for a city of one polygon, a MultiPolygon otherwise.
private func geoJSON(_ cities: Cities) -> String {
    func ring(_ ring: [Coordinate]) -> String {
        "[" + ring.map { "[\($0.lng),\($0.lat)]" }.joined(separator: ",") + "]"
    }
    func polygon(_ polygon: City.Polygon) -> String {
        "[" + ([polygon.outer] + polygon.holes).map(ring).joined(separator: ",") + "]"
    }
    let features = cities.all.map { city in
        let geometry =
            city.polygons.count == 1
            ? #"{"type":"Polygon","coordinates":\#(polygon(city.polygons[0]))}"#
            : #"{"type":"MultiPolygon","coordinates":[\#(city.polygons.map(polygon).joined(separator: ","))]}"#
        return #"{"type":"Feature","properties":{"name":"\#(city.name)"},"geometry":\#(geometry)}"#
    }
    return #"{"type":"FeatureCollection","features":[\#(features.joined(separator: ","))]}"#
}
