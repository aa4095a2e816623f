import EnRouteModels

@testable import HTTPEngine

/// OSRMQueryParser (compiled into this target from Sources/EnRouteAPI) on arbitrary request targets, cut into path,
/// coordinates segment and query as the engine and the `/{service}/v1/{profile}/{coordinates}` routes cut them.
/// Properties: a query that parses has a number of coordinates within the service's bounds, each on the globe, one
/// heading slot per coordinate within 0 to 360, table indices below the count and a nearest count within 1 to 100;
/// written back out as a request target it parses to the same query; a refusal is 400 with one of osrm-routed's codes
/// and names a position inside the path.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOSRMQuery(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let target = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    guard let (service, path, segment, query) = request(target) else { return 0 }
    do throws(OSRMFailure) {
        switch service {
        case "route":
            let parsed = try OSRMQueryParser.route(path: path, segment: segment, query: query)
            check(parsed.coordinates, parsed.headings, within: 2...OSRMQueryParser.maxRouteCoordinates)
            let again = try reparse(service, parsed.coordinates, routeOptions(parsed)) { p, s, q throws(OSRMFailure) in
                try OSRMQueryParser.route(path: p, segment: s, query: q)
            }
            property(same(parsed, again), "the route query written out parses differently")
        case "table":
            let parsed = try OSRMQueryParser.table(path: path, segment: segment, query: query)
            check(parsed.coordinates, nil, within: 2...OSRMQueryParser.maxTableCoordinates)
            property((parsed.sources + parsed.destinations).allSatisfy(parsed.coordinates.indices.contains), "indices")
            let options = [
                "sources": list(parsed.sources), "destinations": list(parsed.destinations),
                "annotations": [parsed.durations ? "duration" : nil, parsed.distances ? "distance" : nil]
                    .compactMap { $0 }.joined(separator: ","),
                "generate_hints": "\(parsed.generateHints)", "skip_waypoints": "\(parsed.skipWaypoints)",
            ]
            let again = try reparse(service, parsed.coordinates, options.filter { !$0.value.isEmpty }) {
                p, s, q throws(OSRMFailure) in
                try OSRMQueryParser.table(path: p, segment: s, query: q)
            }
            property(
                again.coordinates == parsed.coordinates && again.sources == parsed.sources
                    && again.destinations == parsed.destinations && again.generateHints == parsed.generateHints
                    && again.skipWaypoints == parsed.skipWaypoints
                    && (parsed.durations || parsed.distances
                        ? again.durations == parsed.durations && again.distances == parsed.distances : true),
                "the table query written out parses differently")
        case "nearest":
            let parsed = try OSRMQueryParser.nearest(path: path, segment: segment, query: query)
            check([parsed.coordinate], [parsed.heading], within: 1...1)
            property((1...OSRMQueryParser.maxNearestResults).contains(parsed.number), "number \(parsed.number)")
            var options = ["number": "\(parsed.number)", "generate_hints": "\(parsed.generateHints)"]
            if let heading = parsed.heading { options["bearings"] = "\(Int(heading)),0" }
            let again = try reparse(service, [parsed.coordinate], options) { p, s, q throws(OSRMFailure) in
                try OSRMQueryParser.nearest(path: p, segment: s, query: q)
            }
            property(
                again.coordinate == parsed.coordinate && again.heading == parsed.heading
                    && again.number == parsed.number
                    && again.generateHints == parsed.generateHints, "the nearest query written out parses differently")
        default:
            return 0
        }
    } catch {
        property(
            error.status == 400 && ["InvalidQuery", "InvalidOptions", "InvalidValue", "TooBig"].contains(error.code),
            "refused with \(error)")
        if let range = error.message.range(of: "close to position ") {
            let position = Int(error.message[range.upperBound...])
            property(
                position.map { $0 <= path.utf8.count + 1 } == true, "\(error.message) in a path of \(path.utf8.count)")
        }
    }
    return 0
}

/// The service, decoded path, coordinates segment and query arguments of `target`, when its path has the routes' shape.
private func request(_ target: String) -> (String, String, String, [String: String])? {
    guard let path = HTTPParser.decodedPath(target) else { return nil }
    let segments = path.split(separator: "/", omittingEmptySubsequences: false)
    guard segments.count == 5, segments[0].isEmpty, segments[2] == "v1", !segments[3].isEmpty, !segments[4].isEmpty
    else { return nil }
    return (String(segments[1]), path, String(segments[4]), HTTPParser.queryArguments(target))
}

private func check(_ coordinates: [Coordinate], _ headings: [Double?]?, within bounds: ClosedRange<Int>) {
    property(bounds.contains(coordinates.count), "\(coordinates.count) coordinates")
    property(coordinates.allSatisfy(\.isValid), "a coordinate off the globe")
    if let headings {
        property(headings.count == coordinates.count, "\(headings.count) headings for \(coordinates.count) coordinates")
        property(headings.allSatisfy { $0.map { (0...360).contains($0) } ?? true }, "headings \(headings)")
    }
}

private func list(_ indices: [Int]) -> String { indices.map(String.init).joined(separator: ";") }

private func routeOptions(_ query: OSRMRouteQuery) -> [String: String] {
    var options = [
        "steps": "\(query.steps)", "generate_hints": "\(query.generateHints)",
        "skip_waypoints": "\(query.skipWaypoints)",
    ]
    options["overview"] =
        switch query.overview {
        case .full: "full"
        case .simplified: "simplified"
        case .none: "false"
        }
    options["geometries"] =
        switch query.geometries {
        case .polyline: "polyline"
        case .polyline6: "polyline6"
        case .geojson: "geojson"
        }
    if query.headings.contains(where: { $0 != nil }) {
        options["bearings"] = query.headings.map { $0.map { "\(Int($0)),0" } ?? "" }.joined(separator: ";")
    }
    return options
}

private func same(_ a: OSRMRouteQuery, _ b: OSRMRouteQuery) -> Bool {
    a.coordinates == b.coordinates && a.headings == b.headings && a.steps == b.steps && a.overview == b.overview
        && a.geometries == b.geometries && a.generateHints == b.generateHints && a.skipWaypoints == b.skipWaypoints
}

/// Writes `coordinates` and `options` as a request target for `service` and parses it again the routes' way.
private func reparse<Query>(
    _ service: String, _ coordinates: [Coordinate], _ options: [String: String],
    _ parse: (String, String, [String: String]) throws(OSRMFailure) -> Query
) throws(OSRMFailure) -> Query {
    let segment = coordinates.map { "\($0.lng),\($0.lat)" }.joined(separator: ";")
    let target =
        "/\(service)/v1/car/\(segment)?"
        + options.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        .joined(separator: "&")
    guard let (_, path, written, query) = request(target) else {
        property(false, "the written target \(target) does not have the routes' shape")
        throw OSRMFailure(code: "InvalidQuery", message: "")
    }
    do {
        return try parse(path, written, query)
    } catch {
        property(false, "the written target \(target) is refused: \(error)")
        throw error
    }
}
