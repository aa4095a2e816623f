import EnRouteModels

/// How an OSRM-compatible answer writes geometries (`geometries=`).
enum OSRMGeometryFormat: Sendable { case polyline, polyline6, geojson }

/// How much of a route's geometry the answer carries (`overview=`).
enum OSRMOverview: Sendable { case full, simplified, none }

/// An OSRM-style refusal: its code (`InvalidQuery`, `NoSegment`…), message and HTTP status, as osrm-routed sends them.
struct OSRMFailure: Error, Sendable, Equatable {
    let code: String
    let message: String
    var status = 400
}

/// What `/route/v1` was asked.
struct OSRMRouteQuery: Sendable {
    var coordinates: [Coordinate]
    var headings: [Double?]
    var steps = false
    var overview = OSRMOverview.simplified
    var geometries = OSRMGeometryFormat.polyline
    var generateHints = true
    var skipWaypoints = false
}

/// What `/table/v1` was asked.
struct OSRMTableQuery: Sendable {
    var coordinates: [Coordinate]
    var sources: [Int]
    var destinations: [Int]
    var durations = true
    var distances = false
    var generateHints = true
    var skipWaypoints = false
}

/// What `/nearest/v1` was asked.
struct OSRMNearestQuery: Sendable {
    var coordinate: Coordinate
    var heading: Double?
    var number = 1
    var generateHints = true
}

/// Reads OSRM's URL grammar (`/{service}/v1/{profile}/{lng},{lat};…?option=value&…`) into queries, refusing what
/// osrm-routed refuses with the same codes. The profile is not checked: like osrm-routed, one profile is served.
enum OSRMQueryParser {
    /// osrm-routed's defaults for the largest requests.
    static let maxRouteCoordinates = 500
    static let maxTableCoordinates = 100
    static let maxNearestResults = 100

    private static let common: Set<String> = [
        "bearings", "radiuses", "generate_hints", "hints", "approaches", "exclude", "snapping", "skip_waypoints",
    ]
    private static let routeOptions = common.union([
        "alternatives", "steps", "annotations", "geometries", "overview", "continue_straight", "waypoints",
    ])
    private static let tableOptions = common.union([
        "sources", "destinations", "annotations", "fallback_speed", "fallback_coordinate", "scale_factor",
    ])
    private static let nearestOptions = common.union(["number"])

    static func route(path: String, segment: String, query: [String: String]) throws(OSRMFailure) -> OSRMRouteQuery {
        let coordinates = try parseCoordinates(segment, path: path)
        try checkKeys(query, allowed: routeOptions, path: path)
        guard coordinates.count >= 2 else {
            throw OSRMFailure(code: "InvalidOptions", message: "Number of coordinates needs to be at least two.")
        }
        guard coordinates.count <= maxRouteCoordinates else {
            throw OSRMFailure(
                code: "TooBig",
                message:
                    "Number of entries \(coordinates.count) is higher than current maximum (\(maxRouteCoordinates))")
        }
        var result = OSRMRouteQuery(
            coordinates: coordinates, headings: try common(query, count: coordinates.count, path: path))
        result.generateHints = try flag(query, "generate_hints", default: true, path: path)
        result.skipWaypoints = try flag(query, "skip_waypoints", default: false, path: path)
        result.steps = try flag(query, "steps", default: false, path: path)
        _ = try flag(query, "continue_straight", default: true, path: path)
        if let text = query["alternatives"], !["true", "false"].contains(text), Int(text) == nil {
            throw malformed(path)
        }
        if let text = query["annotations"] {
            guard text == "false" else {
                throw OSRMFailure(
                    code: "InvalidOptions",
                    message: "annotations are not supported by this server; ask for annotations=false")
            }
        }
        if query["waypoints"] != nil {
            throw OSRMFailure(
                code: "InvalidOptions",
                message: "waypoints is not supported by this server: every coordinate is a waypoint")
        }
        switch query["geometries"] {
        case nil, "polyline": result.geometries = .polyline
        case "polyline6": result.geometries = .polyline6
        case "geojson": result.geometries = .geojson
        default: throw malformed(path)
        }
        switch query["overview"] {
        case nil, "simplified": result.overview = .simplified
        case "full": result.overview = .full
        case "false": result.overview = .none
        default: throw malformed(path)
        }
        return result
    }

    static func table(path: String, segment: String, query: [String: String]) throws(OSRMFailure) -> OSRMTableQuery {
        let coordinates = try parseCoordinates(segment, path: path)
        try checkKeys(query, allowed: tableOptions, path: path)
        guard coordinates.count >= 2 else {
            throw OSRMFailure(code: "InvalidOptions", message: "Number of coordinates needs to be at least two.")
        }
        guard coordinates.count <= maxTableCoordinates else {
            throw OSRMFailure(code: "TooBig", message: "Too many table coordinates")
        }
        _ = try common(query, count: coordinates.count, path: path)
        for unsupported in ["fallback_speed", "fallback_coordinate"] where query[unsupported] != nil {
            throw OSRMFailure(code: "InvalidOptions", message: "\(unsupported) is not supported by this server")
        }
        if let scale = query["scale_factor"], Double(scale) != 1 {
            throw OSRMFailure(code: "InvalidOptions", message: "scale_factor is not supported by this server (only 1)")
        }
        func indices(_ name: String) throws(OSRMFailure) -> [Int] {
            guard let text = query[name], text != "all" else { return Array(coordinates.indices) }
            var result: [Int] = []
            for part in text.split(separator: ";", omittingEmptySubsequences: false) {
                guard let index = Int(part), index >= 0 else { throw malformed(path) }
                guard index < coordinates.count else {
                    throw OSRMFailure(
                        code: "InvalidOptions",
                        message: "\(name) index \(index) is not below the number of coordinates (\(coordinates.count))")
                }
                result.append(index)
            }
            return result
        }
        var result = OSRMTableQuery(
            coordinates: coordinates, sources: try indices("sources"), destinations: try indices("destinations"))
        result.generateHints = try flag(query, "generate_hints", default: true, path: path)
        result.skipWaypoints = try flag(query, "skip_waypoints", default: false, path: path)
        if let text = query["annotations"] {
            var durations = false, distances = false
            for part in text.split(separator: ",", omittingEmptySubsequences: false) {
                switch part {
                case "duration": durations = true
                case "distance": distances = true
                default: throw malformed(path)
                }
            }
            result.durations = durations; result.distances = distances
        }
        return result
    }

    static func nearest(path: String, segment: String, query: [String: String]) throws(OSRMFailure) -> OSRMNearestQuery
    {
        let coordinates = try parseCoordinates(segment, path: path)
        try checkKeys(query, allowed: nearestOptions, path: path)
        guard coordinates.count == 1 else {
            throw OSRMFailure(code: "InvalidOptions", message: "Only one input coordinate is supported")
        }
        var result = OSRMNearestQuery(coordinate: coordinates[0], heading: try common(query, count: 1, path: path)[0])
        result.generateHints = try flag(query, "generate_hints", default: true, path: path)
        if let text = query["number"] {
            guard let number = Int(text) else { throw malformed(path) }
            guard number >= 1 else { throw OSRMFailure(code: "InvalidOptions", message: "number must be at least 1") }
            guard number <= maxNearestResults else {
                throw OSRMFailure(
                    code: "TooBig",
                    message: "Number of results \(number) is higher than current maximum (\(maxNearestResults))")
            }
            result.number = number
        }
        return result
    }

    // MARK: - Pieces

    /// `lng,lat;lng,lat…` (a `.json` suffix allowed, as OSRM allows it).
    static func parseCoordinates(_ segment: String, path: String) throws(OSRMFailure) -> [Coordinate] {
        var text = Substring(segment)
        if text.hasSuffix(".json") { text = text.dropLast(5) }
        let prefix = path.utf8.count - segment.utf8.count
        var coordinates: [Coordinate] = []
        var offset = 0
        for pair in text.split(separator: ";", omittingEmptySubsequences: false) {
            let parts = pair.split(separator: ",", omittingEmptySubsequences: false)
            guard parts.count == 2, let lng = Double(parts[0]), let lat = Double(parts[1]), lng.isFinite, lat.isFinite
            else {
                throw OSRMFailure(
                    code: "InvalidQuery", message: "Query string malformed close to position \(prefix + offset)")
            }
            guard (-180...180).contains(lng), (-90...90).contains(lat) else {
                throw OSRMFailure(code: "InvalidValue", message: "Invalid coordinate value.")
            }
            coordinates.append(Coordinate(lat: lat, lng: lng))
            offset += pair.utf8.count + 1
        }
        return coordinates
    }

    private static func malformed(_ path: String) -> OSRMFailure {
        OSRMFailure(code: "InvalidQuery", message: "Query string malformed close to position \(path.utf8.count + 1)")
    }

    private static func checkKeys(_ query: [String: String], allowed: Set<String>, path: String) throws(OSRMFailure) {
        for key in query.keys where !allowed.contains(key) { throw malformed(path) }
    }

    private static func flag(
        _ query: [String: String], _ name: String, default value: Bool, path: String
    ) throws(OSRMFailure) -> Bool {
        switch query[name] {
        case nil: return value
        case "true": return true
        case "false": return false
        default: throw malformed(path)
        }
    }

    /// The options every service shares: per-coordinate lists must have one entry per coordinate; bearings
    /// (`degrees,range`) become headings; radiuses and hints are read and not used (the server's own snapping
    /// distance applies); exclude classes are not supported.
    private static func common(_ query: [String: String], count: Int, path: String) throws(OSRMFailure) -> [Double?] {
        func list(_ name: String) throws(OSRMFailure) -> [Substring]? {
            guard let text = query[name] else { return nil }
            let parts = text.split(separator: ";", omittingEmptySubsequences: false)
            guard parts.count == count else {
                throw OSRMFailure(
                    code: "InvalidOptions",
                    message: "Number of elements in \(name) size \(parts.count) does not match coordinate size \(count)"
                )
            }
            return parts
        }
        var headings = [Double?](repeating: nil, count: count)
        if let bearings = try list("bearings") {
            for (index, part) in bearings.enumerated() where !part.isEmpty {
                let values = part.split(separator: ",", omittingEmptySubsequences: false)
                guard values.count == 2, let degrees = Int(values[0]), let range = Int(values[1]) else {
                    throw malformed(path)
                }
                guard (0...360).contains(degrees), (0...180).contains(range) else {
                    throw OSRMFailure(code: "InvalidValue", message: "Invalid bearing value.")
                }
                headings[index] = Double(degrees)
            }
        }
        if let radiuses = try list("radiuses") {
            for part in radiuses where !part.isEmpty && part != "unlimited" {
                guard let radius = Double(part), radius >= 0 else { throw malformed(path) }
            }
        }
        _ = try list("hints")
        if let approaches = try list("approaches") {
            for part in approaches where !["", "curb", "unrestricted", "opposite"].contains(part) {
                throw malformed(path)
            }
        }
        if let exclude = query["exclude"], !exclude.isEmpty {
            throw OSRMFailure(code: "InvalidValue", message: "Exclude flag combination is not supported.")
        }
        if let snapping = query["snapping"], !["default", "any"].contains(snapping) { throw malformed(path) }
        return headings
    }
}
