public import Foundation
public import EnRouteModels

/// One city EnRoute serves: a name and the area it covers (one or more polygons, holes honoured).
public struct City: Sendable, Equatable {
    /// A polygon: its outer ring and the holes cut out of it, each ring closed (last position equals the first).
    public struct Polygon: Sendable, Equatable {
        public let outer: [Coordinate]
        public let holes: [[Coordinate]]
        public init(outer: [Coordinate], holes: [[Coordinate]] = []) { self.outer = outer; self.holes = holes }
    }

    public let name: String
    public let polygons: [Polygon]
    /// The bounding box of every outer ring: a cheap test before the rings are walked.
    let minLat: Double, maxLat: Double, minLng: Double, maxLng: Double

    /// A city named `name` covering `polygons` (rings as given; `Cities.load` checks them).
    public init(name: String, polygons: [Polygon]) {
        self.name = name
        self.polygons = polygons
        let points = polygons.flatMap(\.outer)
        minLat = points.map(\.lat).min() ?? 0; maxLat = points.map(\.lat).max() ?? 0
        minLng = points.map(\.lng).min() ?? 0; maxLng = points.map(\.lng).max() ?? 0
    }

    /// True when `point` lies inside one of the city's polygons and outside its holes.
    public func contains(_ point: Coordinate) -> Bool {
        guard point.lat >= minLat, point.lat <= maxLat, point.lng >= minLng, point.lng <= maxLng else { return false }
        return polygons.contains { polygon in
            Self.ring(polygon.outer, contains: point) && !polygon.holes.contains { Self.ring($0, contains: point) }
        }
    }

    /// Even-odd rule: a ray from `point` towards growing longitude crosses the ring an odd number of times.
    static func ring(_ ring: [Coordinate], contains point: Coordinate) -> Bool {
        var inside = false
        var j = ring.count - 1
        for i in ring.indices {
            let a = ring[i], b = ring[j]
            if (a.lat > point.lat) != (b.lat > point.lat) {
                let crossing = a.lng + (point.lat - a.lat) / (b.lat - a.lat) * (b.lng - a.lng)
                if point.lng < crossing { inside.toggle() }
            }
            j = i
        }
        return inside
    }
}

/// The cities EnRoute serves (matching, pricing and live positions are partitioned by city): each trip, provider
/// position and stream belongs to the first city, in file order, whose area holds its point.
public struct Cities: Sendable, Equatable {
    /// The name of the one city of a configuration without cities: it covers the whole world.
    public static let defaultName = "default"

    /// The configured cities in file order; empty means one city, `defaultName`, everywhere.
    public let all: [City]

    /// The cities given, in the order that decides a point on a shared border.
    public init(_ cities: [City]) { all = cities }

    /// No configuration: one city covering everything.
    public static let everywhere = Cities([])

    /// The names of the partitions, in order.
    public var names: [String] { all.isEmpty ? [Self.defaultName] : all.map(\.name) }

    /// The name of the city whose area holds `point`, nil when no configured city does.
    public func city(containing point: Coordinate) -> String? {
        guard !all.isEmpty else { return Self.defaultName }
        return all.first { $0.contains(point) }?.name
    }

    /// The city of a trip starting at `pickup`, or a 422 naming `pointer` when no city EnRoute serves holds it.
    public func city(for pickup: Coordinate, pointer: String) throws(TripError) -> String {
        guard let name = city(containing: pickup) else {
            throw TripError.invalid(
                pointer: pointer, detail: "is outside every city EnRoute serves (\(names.joined(separator: ", ")))")
        }
        return name
    }
}

/// A cities file that cannot be used, with the place in it that is wrong.
public struct CitiesFileError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Where in the document, e.g. `features[1].geometry.coordinates[0]`.
    public let path: String
    public let problem: String
    public init(_ path: String, _ problem: String) { self.path = path; self.problem = problem }
    public var description: String { path.isEmpty ? problem : "\(path): \(problem)" }
}

extension Cities {
    /// Reads a GeoJSON FeatureCollection: one Feature per city, `properties.name` its name (unique, letters, digits,
    /// `-` and `_`: it names Redis keys and partitions), geometry a Polygon or a MultiPolygon of closed rings.
    public static func load(geoJSON data: Data) throws(CitiesFileError) -> Cities {
        let document: GeoJSONValue
        do { document = try JSONDecoder().decode(GeoJSONValue.self, from: data) } catch {
            throw CitiesFileError("", "not JSON: \(error.localizedDescription)")
        }
        guard let root = document.object, root["type"]?.string == "FeatureCollection" else {
            throw CitiesFileError("type", "must be a GeoJSON FeatureCollection")
        }
        guard let features = root["features"]?.array, !features.isEmpty else {
            throw CitiesFileError("features", "must list at least one city")
        }
        var cities: [City] = []
        var seen: Set<String> = []
        for (index, item) in features.enumerated() {
            let at = "features[\(index)]"
            guard let feature = item.object, feature["type"]?.string == "Feature" else {
                throw CitiesFileError(at, "must be a Feature")
            }
            guard let name = feature["properties"]?.object?["name"]?.string else {
                throw CitiesFileError("\(at).properties.name", "must be the city's name")
            }
            guard !name.isEmpty, name.count <= 64, name.unicodeScalars.allSatisfy(isNameScalar) else {
                throw CitiesFileError(
                    "\(at).properties.name", "must be 1 to 64 letters, digits, '-' or '_', not \"\(name)\"")
            }
            guard seen.insert(name).inserted else {
                throw CitiesFileError("\(at).properties.name", "\"\(name)\" names two cities")
            }
            guard let geometry = feature["geometry"]?.object, let type = geometry["type"]?.string else {
                throw CitiesFileError("\(at).geometry", "must be a Polygon or MultiPolygon")
            }
            let coordinates = geometry["coordinates"]
            let polygons: [City.Polygon]
            switch type {
            case "Polygon": polygons = [try polygon(coordinates, at: "\(at).geometry.coordinates")]
            case "MultiPolygon":
                guard let list = coordinates?.array, !list.isEmpty else {
                    throw CitiesFileError("\(at).geometry.coordinates", "must list at least one polygon")
                }
                var parts: [City.Polygon] = []
                for (i, part) in list.enumerated() {
                    parts.append(try polygon(part, at: "\(at).geometry.coordinates[\(i)]"))
                }
                polygons = parts
            default: throw CitiesFileError("\(at).geometry.type", "must be Polygon or MultiPolygon, not \(type)")
            }
            cities.append(City(name: name, polygons: polygons))
        }
        return Cities(cities)
    }

    private static func isNameScalar(_ scalar: Unicode.Scalar) -> Bool {
        ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar)
            || scalar == "-" || scalar == "_"
    }

    private static func polygon(_ value: GeoJSONValue?, at path: String) throws(CitiesFileError) -> City.Polygon {
        guard let rings = value?.array, !rings.isEmpty else {
            throw CitiesFileError(path, "must list the outer ring, then any holes")
        }
        var parsed: [[Coordinate]] = []
        for (i, ring) in rings.enumerated() { parsed.append(try self.ring(ring, at: "\(path)[\(i)]")) }
        return City.Polygon(outer: parsed[0], holes: Array(parsed.dropFirst()))
    }

    private static func ring(_ value: GeoJSONValue, at path: String) throws(CitiesFileError) -> [Coordinate] {
        guard let positions = value.array, positions.count >= 4 else {
            throw CitiesFileError(path, "a ring needs at least 4 positions, the last equal to the first")
        }
        var ring: [Coordinate] = []
        for (i, position) in positions.enumerated() {
            // GeoJSON orders a position longitude first.
            guard let pair = position.array, pair.count >= 2, let lng = pair[0].number, let lat = pair[1].number,
                (-180...180).contains(lng), (-90...90).contains(lat)
            else {
                throw CitiesFileError("\(path)[\(i)]", "must be [longitude, latitude] within [-180, 180] and [-90, 90]")
            }
            ring.append(Coordinate(lat: lat, lng: lng))
        }
        guard ring.first == ring.last else {
            throw CitiesFileError(path, "must be closed: its last position must equal its first")
        }
        return ring
    }
}

/// A JSON document as a tree, read by `JSONDecoder`: its numbers are the nearest doubles to the text (Foundation's
/// `JSONSerialization` on Linux can be a few units in the last place off, so a boundary written out moved).
private enum GeoJSONValue: Decodable {
    case null, bool(Bool), number(Double), string(String), array([GeoJSONValue]), object([String: GeoJSONValue])

    init(from decoder: any Decoder) throws {
        if var list = try? decoder.unkeyedContainer() {
            var items: [GeoJSONValue] = []
            while !list.isAtEnd { items.append(try list.decode(GeoJSONValue.self)) }
            self = .array(items)
            return
        }
        if let keyed = try? decoder.container(keyedBy: Key.self) {
            var members: [String: GeoJSONValue] = [:]
            for key in keyed.allKeys { members[key.stringValue] = try keyed.decode(GeoJSONValue.self, forKey: key) }
            self = .object(members)
            return
        }
        let single = try decoder.singleValueContainer()
        if single.decodeNil() {
            self = .null
        } else if let value = try? single.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? single.decode(Double.self) {
            self = .number(value)
        } else {
            self = .string(try single.decode(String.self))
        }
    }

    private struct Key: CodingKey {
        let stringValue: String
        init(stringValue: String) { self.stringValue = stringValue }
        var intValue: Int? { nil }
        init?(intValue: Int) { nil }
    }

    var object: [String: GeoJSONValue]? { if case .object(let members) = self { members } else { nil } }
    var array: [GeoJSONValue]? { if case .array(let items) = self { items } else { nil } }
    var string: String? { if case .string(let text) = self { text } else { nil } }
    /// A JSON number's value; nil for anything else, `true` and `false` included.
    var number: Double? { if case .number(let value) = self { value } else { nil } }
}
