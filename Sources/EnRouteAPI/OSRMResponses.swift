import Foundation
import EnRouteDomain
import EnRouteModels

/// OSRM's response shapes written from the domain's road answers: `routes`/`legs`/`steps` with maneuvers and
/// intersections, table matrices, waypoints. Durations are EnRoute's; `weight` is the duration (what EnRoute
/// minimises).
enum OSRMResponses {
    /// `{"code":"…","message":"…"}` as osrm-routed answers a refusal.
    static func failure(_ failure: OSRMFailure) -> [UInt8] {
        var w = OSRMJSONWriter(capacity: 128)
        w.raw(#"{"code":"#); w.string(failure.code)
        w.raw(#","message":"#); w.string(failure.message)
        w.byte(UInt8(ascii: "}"))
        return w.bytes
    }

    /// The refusal for a road query that found nothing.
    static func failure(_ error: RoadRoutingError, coordinateOffset: Int = 0) -> OSRMFailure? {
        switch error {
        case .noSegment(let index):
            return OSRMFailure(
                code: "NoSegment",
                message: "Could not find a matching segment for coordinate \(index + coordinateOffset)")
        case .noRoute: return OSRMFailure(code: "NoRoute", message: "Impossible route between points")
        case .unavailable: return nil
        }
    }

    // MARK: - Route

    static func route(_ query: OSRMRouteQuery, legs: [RoadLeg]) -> [UInt8] {
        // Room for the whole answer at once: about 8 bytes a point per geometry written, 450 a step.
        let points = legs.reduce(0) { $0 + $1.geometry.count }, steps = legs.reduce(0) { $0 + $1.steps.count }
        let perPoint = query.geometries == .geojson ? 24 : 8
        let geometries = (query.overview == .none ? 0 : points) + (query.steps ? points + 2 * steps : 0)
        var w = OSRMJSONWriter(
            capacity: 512 + 200 * legs.count + perPoint * geometries + (query.steps ? 450 * steps : 0))
        let distance = legs.reduce(0) { $0 + $1.distanceMeters }, duration = legs.reduce(0) { $0 + $1.durationSeconds }
        w.raw(#"{"code":"Ok","routes":[{"#)
        switch query.overview {
        case .none: break
        case .full:
            w.key("geometry"); writeOverview(&w, legs: legs, format: query.geometries, simplify: false);
            w.byte(UInt8(ascii: ","))
        case .simplified:
            w.key("geometry"); writeOverview(&w, legs: legs, format: query.geometries, simplify: true);
            w.byte(UInt8(ascii: ","))
        }
        w.raw(#""legs":["#)
        for (index, leg) in legs.enumerated() {
            if index > 0 { w.byte(UInt8(ascii: ",")) }
            writeLeg(&w, leg, destination: query.coordinates[index + 1], query: query)
        }
        w.raw(#"],"weight_name":"duration","weight":"#); w.number(duration, decimals: 1)
        w.raw(#","duration":"#); w.number(duration, decimals: 1)
        w.raw(#","distance":"#); w.number(distance, decimals: 1)
        w.raw("}]")
        if !query.skipWaypoints, let first = legs.first {
            w.raw(#","waypoints":["#)
            writeWaypoint(&w, first.start, hints: query.generateHints)
            for leg in legs {
                w.byte(UInt8(ascii: ","))
                writeWaypoint(&w, leg.end, hints: query.generateHints)
            }
            w.byte(UInt8(ascii: "]"))
        }
        w.byte(UInt8(ascii: "}"))
        return w.bytes
    }

    private static func writeOverview(
        _ w: inout OSRMJSONWriter, legs: [RoadLeg], format: OSRMGeometryFormat, simplify: Bool
    ) {
        var points: [Coordinate]
        if legs.count == 1 {
            points = legs[0].geometry
        } else {
            points = []
            for leg in legs { points += points.isEmpty ? leg.geometry[...] : leg.geometry.dropFirst() }
        }
        if simplify { points = simplified(points) }
        w.geometry(points, as: format)
    }

    private static func writeLeg(
        _ w: inout OSRMJSONWriter, _ leg: RoadLeg, destination: Coordinate, query: OSRMRouteQuery
    ) {
        w.raw(#"{"steps":["#)
        if query.steps {
            var start = 0
            for (index, step) in leg.steps.enumerated() {
                if index > 0 { w.byte(UInt8(ascii: ",")) }
                let isLast = index == leg.steps.count - 1
                var end = start
                if isLast {
                    end = leg.geometry.count - 1
                } else {
                    end = geometryIndex(of: leg.steps[index + 1].location, in: leg.geometry, from: start)
                }
                let slice =
                    isLast || step.type == "arrive"
                    ? [step.location, step.location][...]
                    : leg.geometry[start...max(start, end)]
                writeStep(
                    &w, step, geometry: slice, format: query.geometries,
                    arrivalSide: step.type == "arrive"
                        ? side(of: destination, from: leg.end) : nil)
                start = end
            }
        }
        // As OSRM: the summary names the leg's main streets only when steps are asked for.
        w.raw(#"],"summary":"#); w.string(query.steps ? summary(leg.steps) : "")
        w.raw(#","weight":"#); w.number(leg.durationSeconds, decimals: 1)
        w.raw(#","duration":"#); w.number(leg.durationSeconds, decimals: 1)
        w.raw(#","distance":"#); w.number(leg.distanceMeters, decimals: 1)
        w.byte(UInt8(ascii: "}"))
    }

    private static func writeStep(
        _ w: inout OSRMJSONWriter, _ step: RouteManeuver, geometry: ArraySlice<Coordinate>,
        format: OSRMGeometryFormat, arrivalSide: String?
    ) {
        let incoming = (step.bearingBefore + 180) % 360
        w.raw(#"{"intersections":[{"#)
        switch step.type {
        case "depart":
            w.raw(#""out":0,"entry":[true],"bearings":["#); w.integer(step.bearingAfter); w.byte(UInt8(ascii: "]"))
        case "arrive":
            w.raw(#""in":0,"entry":[true],"bearings":["#); w.integer(incoming); w.byte(UInt8(ascii: "]"))
        default:
            if incoming == step.bearingAfter {
                w.raw(#""out":0,"in":0,"entry":[true],"bearings":["#); w.integer(incoming); w.byte(UInt8(ascii: "]"))
            } else {
                let inFirst = incoming < step.bearingAfter
                w.raw(
                    inFirst
                        ? #""out":1,"in":0,"entry":[false,true],"bearings":["#
                        : #""out":0,"in":1,"entry":[true,false],"bearings":["#)
                w.integer(min(incoming, step.bearingAfter)); w.byte(UInt8(ascii: ","));
                w.integer(max(incoming, step.bearingAfter))
                w.byte(UInt8(ascii: "]"))
            }
        }
        w.raw(#","location":"#); w.location(step.location)
        w.raw(#"}],"driving_side":"right","geometry":"#); w.geometry(geometry, as: format)
        w.raw(#","maneuver":{"bearing_after":"#); w.integer(step.bearingAfter)
        w.raw(#","bearing_before":"#); w.integer(step.bearingBefore)
        if let exit = step.exit { w.raw(#","exit":"#); w.integer(exit) }
        w.raw(#","location":"#); w.location(step.location)
        if let modifier = step.modifier ?? arrivalSide { w.raw(#","modifier":"#); w.string(modifier) }
        w.raw(#","type":"#); w.string(step.type)
        w.raw(#"},"name":"#); w.string(step.name)
        w.raw(#","mode":"driving","weight":"#); w.number(step.durationSeconds, decimals: 1)
        w.raw(#","duration":"#); w.number(step.durationSeconds, decimals: 1)
        w.raw(#","distance":"#); w.number(step.distanceMeters, decimals: 1)
        w.byte(UInt8(ascii: "}"))
    }

    /// The index in `geometry`, at or after `from`, of the point where the next maneuver happens.
    private static func geometryIndex(of location: Coordinate, in geometry: [Coordinate], from: Int) -> Int {
        var best = from, bestDistance = Double.infinity
        var index = from
        while index < geometry.count {
            let p = geometry[index]
            if p == location, index > from || geometry.count == 1 { return index }
            let d = abs(p.lat - location.lat) + abs(p.lng - location.lng)
            if d < bestDistance { bestDistance = d; best = index }
            index += 1
        }
        return best
    }

    /// Which side of the road the destination lies on, seen in the direction of travel (OSRM's arrive modifier).
    private static func side(of destination: Coordinate, from end: RoadWaypoint) -> String? {
        guard end.distanceMeters > 0.5 else { return nil }
        let heading = end.bearing * .pi / 180
        let dx = (destination.lng - end.location.lng) * cos(end.location.lat * .pi / 180),
            dy = destination.lat - end.location.lat
        // The cross product of the heading (sin, cos in east/north terms) and the offset: negative is to the right.
        let cross = sin(heading) * dy - cos(heading) * dx
        return cross < 0 ? "right" : "left"
    }

    /// OSRM's leg summary: the two names driven longest, in the order they are first driven.
    static func summary(_ steps: [RouteManeuver]) -> String {
        var totals: [(name: String, meters: Double, first: Int)] = []
        for (index, step) in steps.enumerated() where !step.name.isEmpty && step.type != "arrive" {
            if let i = totals.firstIndex(where: { $0.name == step.name }) {
                totals[i].meters += step.distanceMeters
            } else {
                totals.append((step.name, step.distanceMeters, index))
            }
        }
        let top = totals.sorted { $0.meters > $1.meters }.prefix(2).sorted { $0.first < $1.first }
        return top.map(\.name).joined(separator: ", ")
    }

    /// Douglas–Peucker with a tolerance of 1/500 of the line's extent (at least 2 m), in local metres.
    static func simplified(_ points: [Coordinate]) -> [Coordinate] {
        guard points.count > 2 else { return points }
        let cosLat = cos(points[0].lat * .pi / 180)
        func xy(_ c: Coordinate) -> (Double, Double) { (c.lng * 111_320 * cosLat, c.lat * 110_540) }
        var minX = Double.infinity, maxX = -Double.infinity, minY = Double.infinity, maxY = -Double.infinity
        for p in points {
            let (x, y) = xy(p); minX = min(minX, x); maxX = max(maxX, x); minY = min(minY, y); maxY = max(maxY, y)
        }
        let tolerance = max(2, hypot(maxX - minX, maxY - minY) / 500)
        var keep = [Bool](repeating: false, count: points.count)
        keep[0] = true; keep[points.count - 1] = true
        var stack = [(0, points.count - 1)]
        while let (a, b) = stack.popLast() {
            guard b > a + 1 else { continue }
            let (ax, ay) = xy(points[a]), (bx, by) = xy(points[b])
            let dx = bx - ax, dy = by - ay, length = hypot(dx, dy)
            var worst = a, worstDistance = 0.0
            for i in (a + 1)..<b {
                let (px, py) = xy(points[i])
                let d = length > 0 ? abs(dy * px - dx * py + bx * ay - by * ax) / length : hypot(px - ax, py - ay)
                if d > worstDistance { worstDistance = d; worst = i }
            }
            if worstDistance > tolerance {
                keep[worst] = true
                stack.append((a, worst)); stack.append((worst, b))
            }
        }
        return zip(points, keep).compactMap { $1 ? $0 : nil }
    }

    // MARK: - Table and nearest

    static func table(_ query: OSRMTableQuery, cells: [[RoadCost?]], waypoints: [RoadWaypoint]?) -> [UInt8] {
        var w = OSRMJSONWriter(capacity: 256 + cells.count * (cells.first?.count ?? 0) * 16)
        w.raw(#"{"code":"Ok""#)
        func matrix(_ value: (RoadCost) -> Double) {
            w.byte(UInt8(ascii: "["))
            for (r, row) in cells.enumerated() {
                if r > 0 { w.byte(UInt8(ascii: ",")) }
                w.byte(UInt8(ascii: "["))
                for (c, cell) in row.enumerated() {
                    if c > 0 { w.byte(UInt8(ascii: ",")) }
                    if let cell { w.number(value(cell), decimals: 1) } else { w.raw("null") }
                }
                w.byte(UInt8(ascii: "]"))
            }
            w.byte(UInt8(ascii: "]"))
        }
        if query.durations { w.raw(#","durations":"#); matrix(\.durationSeconds) }
        if query.distances { w.raw(#","distances":"#); matrix(\.distanceMeters) }
        if let waypoints {
            for (name, indices) in [("sources", query.sources), ("destinations", query.destinations)] {
                w.raw(","); w.string(name); w.raw(":[")
                for (i, index) in indices.enumerated() {
                    if i > 0 { w.byte(UInt8(ascii: ",")) }
                    writeWaypoint(&w, waypoints[index], hints: query.generateHints)
                }
                w.byte(UInt8(ascii: "]"))
            }
        }
        w.byte(UInt8(ascii: "}"))
        return w.bytes
    }

    static func nearest(_ query: OSRMNearestQuery, waypoint: RoadWaypoint) -> [UInt8] {
        var w = OSRMJSONWriter(capacity: 256)
        w.raw(#"{"code":"Ok","waypoints":["#)
        writeWaypoint(&w, waypoint, hints: query.generateHints, nodes: true)
        w.raw("]}")
        return w.bytes
    }

    private static func writeWaypoint(
        _ w: inout OSRMJSONWriter, _ waypoint: RoadWaypoint, hints: Bool, nodes: Bool = false
    ) {
        w.byte(UInt8(ascii: "{"))
        // OSRM's node ids are OSM ids; EnRoute's graph does not keep them, so both are 0.
        if nodes { w.raw(#""nodes":[0,0],"#) }
        if hints { w.raw(#""hint":"#); writeHint(&w, waypoint.location); w.byte(UInt8(ascii: ",")) }
        w.raw(#""distance":"#); w.number(waypoint.distanceMeters, decimals: 6)
        w.raw(#","name":"#); w.string(waypoint.name)
        w.raw(#","location":"#); w.location(waypoint.location)
        w.byte(UInt8(ascii: "}"))
    }

    private static let base64: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// An opaque base64 hint (the snapped point in microdegrees); accepted back in `hints=` and not used.
    private static func writeHint(_ w: inout OSRMJSONWriter, _ location: Coordinate) {
        let lat = UInt32(bitPattern: Int32((location.lat * 1e6).rounded())),
            lng = UInt32(bitPattern: Int32((location.lng * 1e6).rounded()))
        let raw: [UInt8] = [
            1, UInt8(lat >> 24), UInt8((lat >> 16) & 0xFF), UInt8((lat >> 8) & 0xFF), UInt8(lat & 0xFF),
            UInt8(lng >> 24), UInt8((lng >> 16) & 0xFF), UInt8((lng >> 8) & 0xFF), UInt8(lng & 0xFF),
        ]
        w.byte(UInt8(ascii: "\""))
        for i in stride(from: 0, to: raw.count, by: 3) {
            let n = UInt32(raw[i]) << 16 | UInt32(raw[i + 1]) << 8 | UInt32(raw[i + 2])
            w.byte(base64[Int(n >> 18)]); w.byte(base64[Int((n >> 12) & 63)]); w.byte(base64[Int((n >> 6) & 63)]);
            w.byte(base64[Int(n & 63)])
        }
        w.byte(UInt8(ascii: "\""))
    }
}
