// `routing-bench city`: a synthetic city written as an OSM PBF file that both EnRoute and osrm-extract read.
//
// A jittered lattice of positions about 110 m apart with curvy shape nodes between them (2-12 a segment, so about
// 10 OSM nodes per junction, as in real extracts). Every 8th line is an arterial (every 16th primary with
// maxspeed 70, the others secondary with maxspeed 50), one segment a way, traffic signals at half the crossings;
// between them neighbourhoods: residential streets running east-west (one way a run, half with maxspeed 30, a
// fifth one-way `yes` or `-1`, some reaching only one of the arterials), sparse north-south connectors and a few
// missing segments, so the network has the hierarchy of a real city rather than a uniform grid. A
// two-carriageway ring motorway (maxspeed 100) has one-way motorway_link ramps to the arterials;
// `no_left_turn` and `only_straight_on` restrictions at some unsignalled arterial crossings, stop signs at some
// residential junctions. Every OSM node lies on a car way, so the node count is the road-node count.
import Foundation
import OSMKit
import Routing

struct CityReport {
    var nodes = 0, ways = 0, relations = 0, junctions = 0
}

enum CityGenerator {
    static let blockMeters = 110.0
    static let centreLat = 52.0, centreLon = 13.0

    /// Writes the city of about `targetNodes` road nodes to `path`.
    static func write(targetNodes: Int, seed: UInt64, to path: String) throws -> CityReport {
        // About 9 OSM nodes per lattice position (it and the shape nodes of its segments present).
        let junctionTarget = max(64.0, Double(targetNodes) / 9.1)
        let side = Int(junctionTarget.squareRoot().rounded())
        let rows = side, columns = side
        var random = SeededGenerator(seed: seed)
        let metresPerLat = 111_320.0, metresPerLon = 111_320.0 * cos(centreLat * .pi / 180)
        func position(row: Double, column: Double) -> (lat: Double, lon: Double) {
            (
                centreLat + (row - Double(rows) / 2) * blockMeters / metresPerLat,
                centreLon + (column - Double(columns) / 2) * blockMeters / metresPerLon
            )
        }
        func junction(_ row: Int, _ column: Int) -> Int64 { Int64(row * columns + column + 1) }
        // 2 primary, 1 secondary, 0 residential
        func streetClass(_ index: Int) -> Int { index % 16 == 0 ? 2 : (index % 8 == 0 ? 1 : 0) }
        func isArterial(_ index: Int) -> Bool { streetClass(index) > 0 }

        // Junction jitter, computed first so segments can bend between the jittered ends.
        var jitter = [(Double, Double)]()
        jitter.reserveCapacity(rows * columns)
        for _ in 0..<(rows * columns) {
            jitter.append(
                (Double.random(in: -0.15...0.15, using: &random), Double.random(in: -0.15...0.15, using: &random)))
        }
        // Segments: horizontal (row r, column c → c+1) then vertical (row r → r+1, column c).
        struct Segment {
            var from: Int64; var to: Int64; var firstShape: Int64; var shapes: Int32; var amplitude: Float;
            var present: Bool
        }
        var segments: [Segment] = []
        segments.reserveCapacity(2 * rows * columns)
        var nextID = Int64(rows * columns + 1)
        for horizontal in [true, false] {
            for row in 0..<(horizontal ? rows : rows - 1) {
                for column in 0..<(horizontal ? columns - 1 : columns) {
                    let street = horizontal ? row : column
                    let roll = Double.random(in: 0..<1, using: &random)
                    let present: Bool
                    if isArterial(street) {
                        present = true
                    } else if horizontal {
                        // East-west residential streets, reaching each arterial they meet half the time.
                        let touchesArterial = isArterial(column) || isArterial(column + 1)
                        present = roll >= (touchesArterial ? 0.5 : 0.03)
                    } else {
                        // Sparse north-south connectors.
                        present = roll < 0.22
                    }
                    let shapes = Int32.random(in: 2...12, using: &random)
                    let amplitude = Float.random(in: -0.12...0.12, using: &random)
                    let to = horizontal ? junction(row, column + 1) : junction(row + 1, column)
                    segments.append(
                        Segment(
                            from: junction(row, column), to: to, firstShape: nextID, shapes: present ? shapes : 0,
                            amplitude: amplitude, present: present))
                    if present { nextID += Int64(shapes) }
                }
            }
        }
        let horizontalCount = rows * (columns - 1)
        func grid(of id: Int64) -> (row: Int, column: Int) { (Int(id - 1) / columns, Int(id - 1) % columns) }

        let minLat = position(row: -2, column: 0).lat, maxLat = position(row: Double(rows) + 2, column: 0).lat
        let minLon = position(row: 0, column: -2).lon, maxLon = position(row: 0, column: Double(columns) + 2).lon
        let writer = try OSMPBFWriter(
            path: path, boundingBox: OSMBoundingBox(minLat: minLat, minLon: minLon, maxLat: maxLat, maxLon: maxLon),
            writingProgram: "routing-bench city")
        var report = CityReport(junctions: rows * columns)

        // Junction nodes, with signals where two arterials meet and stop signs at some residential crossings.
        var signalled = Set<Int64>()
        for row in 0..<rows {
            for column in 0..<columns {
                let id = junction(row, column)
                let (dr, dc) = jitter[Int(id - 1)]
                let at = position(row: Double(row) + dr, column: Double(column) + dc)
                var tags: [String: String] = [:]
                let roll = Double.random(in: 0..<1, using: &random)
                if isArterial(row), isArterial(column), roll < 0.5 {
                    tags["highway"] = "traffic_signals"; signalled.insert(id)
                } else if !isArterial(row), !isArterial(column), roll < 0.05 {
                    tags["highway"] = "stop"
                }
                try writer.write(OSMNode(id: id, lat: at.lat, lon: at.lon, tags: tags)); report.nodes += 1
            }
        }
        // Shape nodes: along the chord between the jittered junctions, bent sideways by a half sine.
        for segment in segments where segment.present {
            let (r0, c0) = grid(of: segment.from), (r1, c1) = grid(of: segment.to)
            let a = jitter[Int(segment.from - 1)], b = jitter[Int(segment.to - 1)]
            let start = (Double(r0) + a.0, Double(c0) + a.1), end = (Double(r1) + b.0, Double(c1) + b.1)
            let count = Int(segment.shapes)
            for index in 0..<count {
                let t = Double(index + 1) / Double(count + 1)
                let bend = Double(segment.amplitude) * sin(.pi * t)
                // Perpendicular to the segment: a horizontal one bends in rows, a vertical one in columns.
                let row = start.0 + (end.0 - start.0) * t + (r0 == r1 ? bend : 0)
                let column = start.1 + (end.1 - start.1) * t + (r0 == r1 ? 0 : bend)
                let at = position(row: row, column: column)
                try writer.write(OSMNode(id: segment.firstShape + Int64(index), lat: at.lat, lon: at.lon));
                report.nodes += 1
            }
        }
        // The ring motorway: two carriageways of nodes every ~60 m at 0.42 of the city's half-width.
        let radius = 0.42 * Double(min(rows, columns))
        let ringCount = max(32, Int(2 * .pi * radius * blockMeters / 60))
        var ringIDs: [[Int64]] = [[], []]
        for carriageway in 0..<2 {
            let offset = carriageway == 0 ? -0.1 : 0.1
            for index in 0..<ringCount {
                let angle = 2 * .pi * Double(index) / Double(ringCount)
                let at = position(
                    row: Double(rows) / 2 + (radius + offset) * sin(angle),
                    column: Double(columns) / 2 + (radius + offset) * cos(angle))
                try writer.write(OSMNode(id: nextID, lat: at.lat, lon: at.lon)); report.nodes += 1
                ringIDs[carriageway].append(nextID)
                nextID += 1
            }
        }

        // Street segments as ways, named by street; one-way streets alternate direction.
        var wayID: Int64 = 1
        var segmentWay = [Int64](repeating: 0, count: segments.count)
        var streetOneway: [Bool: [Int: String]] = [true: [:], false: [:]]
        for horizontal in [true, false] {
            for street in 0..<(horizontal ? rows : columns) where streetClass(street) == 0 {
                let roll = Double.random(in: 0..<1, using: &random)
                if roll < 0.1 {
                    streetOneway[horizontal]![street] = "yes"
                } else if roll < 0.2 {
                    streetOneway[horizontal]![street] = "-1"
                }
            }
        }
        var index = 0
        while index < segments.count {
            let segment = segments[index]
            guard segment.present else { index += 1; continue }
            let horizontal = index < horizontalCount
            let (row, column) = grid(of: segment.from)
            let street = horizontal ? row : column
            var tags: [String: String] = ["name": horizontal ? "Row \(street) Street" : "Column \(street) Avenue"]
            switch streetClass(street) {
            case 2: tags["highway"] = "primary"; tags["maxspeed"] = "70"
            case 1: tags["highway"] = "secondary"; tags["maxspeed"] = "50"
            default:
                tags["highway"] = "residential"
                if street % 2 == 0 { tags["maxspeed"] = "30" }
                if let oneway = streetOneway[horizontal]![street] { tags["oneway"] = oneway }
            }
            var refs = [segment.from]
            var last = index
            while true {
                let piece = segments[last]
                for shape in 0..<Int64(piece.shapes) { refs.append(piece.firstShape + shape) }
                refs.append(piece.to)
                // A residential street runs on as one way until a gap or an arterial it crosses.
                guard horizontal, !isArterial(street), last + 1 < horizontalCount, segments[last + 1].present else {
                    break
                }
                let next = grid(of: segments[last + 1].from)
                guard next.row == row, !isArterial(next.column) else { break }
                last += 1
            }
            try writer.write(OSMWay(id: wayID, refs: refs, tags: tags)); report.ways += 1
            for piece in index...last { segmentWay[piece] = wayID }
            wayID += 1
            index = last + 1
        }
        // The ring's carriageways (0 anticlockwise, 1 clockwise), each split into a few ways, and ramps to the
        // nearest arterial junction wherever the ring passes one.
        for carriageway in 0..<2 {
            let ids = carriageway == 0 ? ringIDs[0] + [ringIDs[0][0]] : (ringIDs[1] + [ringIDs[1][0]]).reversed()
            let pieces = 8, step = (ids.count - 1 + pieces - 1) / pieces
            var start = 0
            while start < ids.count - 1 {
                let end = min(ids.count - 1, start + step)
                try writer.write(
                    OSMWay(
                        id: wayID, refs: Array(ids[start...end]),
                        tags: [
                            "highway": "motorway", "oneway": "yes", "maxspeed": "100", "name": "Ring", "ref": "A1",
                        ]));
                report.ways += 1
                wayID += 1
                start = end
            }
        }
        let arterials = (0..<rows).filter { isArterial($0) }
        for (ring, ids) in ringIDs.enumerated() {
            let forward = ring == 0
            for row in arterials {
                for column in arterials {
                    // The ring node nearest to this arterial junction, if it is within half a block.
                    let dr = Double(row) - Double(rows) / 2, dc = Double(column) - Double(columns) / 2
                    let distance = (dr * dr + dc * dc).squareRoot()
                    guard abs(distance - radius) < 2.5 else { continue }
                    var angle = atan2(dr, dc)
                    if angle < 0 { angle += 2 * .pi }
                    let index = Int((angle / (2 * .pi) * Double(ringCount)).rounded()) % ringCount
                    let next = forward ? (index + 2) % ringCount : (index - 2 + ringCount) % ringCount
                    let previous = forward ? (index - 2 + ringCount) % ringCount : (index + 2) % ringCount
                    let j = junction(row, column)
                    try writer.write(
                        OSMWay(
                            id: wayID, refs: [ids[previous], j], tags: ["highway": "motorway_link", "oneway": "yes"]))
                    wayID += 1
                    try writer.write(
                        OSMWay(id: wayID, refs: [j, ids[next]], tags: ["highway": "motorway_link", "oneway": "yes"]))
                    wayID += 1
                    report.ways += 2
                }
            }
        }

        // Turn restrictions at arterial junctions without signals: no left turn, or only straight on.
        func segmentIndex(from a: (Int, Int), to b: (Int, Int)) -> Int? {
            let (r0, c0) = a, (r1, c1) = b
            guard r1 >= 0, r1 < rows, c1 >= 0, c1 < columns else { return nil }
            if r0 == r1 { let c = min(c0, c1); return r0 * (columns - 1) + c }
            let r = min(r0, r1)
            return horizontalCount + r * columns + c0
        }
        var relationID: Int64 = 1
        for row in 1..<(rows - 1) {
            for column in 1..<(columns - 1) where isArterial(row) && isArterial(column) {
                guard !signalled.contains(junction(row, column)), Double.random(in: 0..<1, using: &random) < 0.4 else {
                    continue
                }
                // Arriving heading (dr, dc): from the junction behind.
                let directions = [(1, 0), (0, 1), (-1, 0), (0, -1)]
                let (dr, dc) = directions[Int.random(in: 0..<4, using: &random)]
                let straight = Double.random(in: 0..<1, using: &random) < 0.3
                // left of (dr, dc) is (dc, -dr) with rows north, columns east
                let (tr, tc) = straight ? (dr, dc) : (dc, -dr)
                guard let fromIndex = segmentIndex(from: (row, column), to: (row - dr, column - dc)),
                    let toIndex = segmentIndex(from: (row, column), to: (row + tr, column + tc)),
                    segments[fromIndex].present, segments[toIndex].present
                else { continue }
                try writer.write(
                    OSMRelation(
                        id: relationID,
                        members: [
                            OSMMember(type: .way, ref: segmentWay[fromIndex], role: "from"),
                            OSMMember(type: .node, ref: junction(row, column), role: "via"),
                            OSMMember(type: .way, ref: segmentWay[toIndex], role: "to"),
                        ], tags: ["type": "restriction", "restriction": straight ? "only_straight_on" : "no_left_turn"])
                )
                relationID += 1
                report.relations += 1
            }
        }
        try writer.finish()
        return report
    }
}
