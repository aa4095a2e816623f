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
import OSMPBF
import Routing

struct CityReport {
    var nodes = 0, ways = 0, relations = 0, junctions = 0
}

enum CityGenerator {
    static let blockMeters = 110.0
    static let centreLat = 52.0, centreLon = 13.0

    /// Writes the city of about `targetNodes` road nodes to `path`: the nodes (junctions, shapes, the ring), then
    /// the ways (streets, the ring, its ramps), then the restrictions. One seeded generator draws every choice, in
    /// that order.
    static func write(targetNodes: Int, seed: UInt64, to path: String) throws -> CityReport {
        var city = try CityWriter(lattice: CityLattice(targetNodes: targetNodes), seed: seed, path: path)
        try city.writeJunctions()
        try city.writeShapeNodes()
        try city.writeRingNodes()
        city.chooseOneWayStreets()
        try city.writeStreets()
        try city.writeRing()
        try city.writeRamps()
        try city.writeRestrictions()
        return try city.finish()
    }
}

/// The city's lattice: its size, where a lattice position lies, and which lines are arterials.
struct CityLattice {
    let rows: Int, columns: Int
    let metresPerLat = 111_320.0, metresPerLon = 111_320.0 * cos(CityGenerator.centreLat * .pi / 180)

    init(targetNodes: Int) {
        // About 9 OSM nodes per lattice position (it and the shape nodes of its segments present).
        let junctionTarget = max(64.0, Double(targetNodes) / 9.1)
        let side = Int(junctionTarget.squareRoot().rounded())
        rows = side
        columns = side
    }

    /// The coordinate of a (fractional) lattice position.
    func position(row: Double, column: Double) -> (lat: Double, lon: Double) {
        (
            CityGenerator.centreLat + (row - Double(rows) / 2) * CityGenerator.blockMeters / metresPerLat,
            CityGenerator.centreLon + (column - Double(columns) / 2) * CityGenerator.blockMeters / metresPerLon
        )
    }

    /// The OSM id of the junction node at a lattice position.
    func junction(_ row: Int, _ column: Int) -> Int64 { Int64(row * columns + column + 1) }

    /// The lattice position of a junction node.
    func grid(of id: Int64) -> (row: Int, column: Int) { (Int(id - 1) / columns, Int(id - 1) % columns) }

    /// 2 primary, 1 secondary, 0 residential.
    static func streetClass(_ index: Int) -> Int { index % 16 == 0 ? 2 : (index % 8 == 0 ? 1 : 0) }

    static func isArterial(_ index: Int) -> Bool { streetClass(index) > 0 }

    /// The horizontal segments (row r, column c → c+1) come first, then the vertical ones.
    var horizontalCount: Int { rows * (columns - 1) }

    /// The index of the segment between two neighbouring positions, nil when `b` is off the lattice.
    func segmentIndex(from a: (Int, Int), to b: (Int, Int)) -> Int? {
        let (r0, c0) = a, (r1, c1) = b
        guard r1 >= 0, r1 < rows, c1 >= 0, c1 < columns else { return nil }
        if r0 == r1 { let c = min(c0, c1); return r0 * (columns - 1) + c }
        let r = min(r0, r1)
        return horizontalCount + r * columns + c0
    }
}

/// The city as it is written: the lattice, the seeded choices made so far, and the ids handed out.
struct CityWriter {
    /// One lattice segment: its end junctions, its shape nodes' ids, its bend, and whether it is a road at all.
    struct Segment {
        var from: Int64; var to: Int64; var firstShape: Int64; var shapes: Int32; var amplitude: Float;
        var present: Bool
    }

    let lattice: CityLattice
    private let writer: OSMPBFWriter
    private var random: SeededGenerator
    private var report: CityReport
    /// Each junction's offset from its lattice position, in blocks.
    private let jitter: [(Double, Double)]
    private let segments: [Segment]
    private var nextID: Int64
    private var signalled = Set<Int64>()
    /// The ring's radius in blocks, its nodes per carriageway, and each carriageway's node ids.
    private let ringRadius: Double, ringCount: Int
    private var ringIDs: [[Int64]] = [[], []]
    private var wayID: Int64 = 1
    private var segmentWay: [Int64] = []
    /// The one-way residential streets, horizontal and vertical, and their `oneway` value.
    private var streetOneway: [Bool: [Int: String]] = [true: [:], false: [:]]

    /// Draws the junctions' jitter and the segments, and opens the file.
    init(lattice: CityLattice, seed: UInt64, path: String) throws {
        self.lattice = lattice
        var random = SeededGenerator(seed: seed)
        jitter = Self.drawJitter(lattice, using: &random)
        (segments, nextID) = Self.drawSegments(lattice, using: &random)
        self.random = random
        ringRadius = 0.42 * Double(min(lattice.rows, lattice.columns))
        ringCount = max(32, Int(2 * .pi * ringRadius * CityGenerator.blockMeters / 60))
        report = CityReport(junctions: lattice.rows * lattice.columns)
        let minLat = lattice.position(row: -2, column: 0).lat
        let maxLat = lattice.position(row: Double(lattice.rows) + 2, column: 0).lat
        let minLon = lattice.position(row: 0, column: -2).lon
        let maxLon = lattice.position(row: 0, column: Double(lattice.columns) + 2).lon
        writer = try OSMPBFWriter(
            path: path, boundingBox: OSMBoundingBox(minLat: minLat, minLon: minLon, maxLat: maxLat, maxLon: maxLon),
            writingProgram: "routing-bench city")
    }

    /// Junction jitter, drawn first so segments can bend between the jittered ends.
    private static func drawJitter(_ lattice: CityLattice, using random: inout SeededGenerator) -> [(Double, Double)] {
        var jitter = [(Double, Double)]()
        jitter.reserveCapacity(lattice.rows * lattice.columns)
        for _ in 0..<(lattice.rows * lattice.columns) {
            jitter.append(
                (Double.random(in: -0.15...0.15, using: &random), Double.random(in: -0.15...0.15, using: &random)))
        }
        return jitter
    }

    /// Segments: horizontal (row r, column c → c+1) then vertical (row r → r+1, column c), with the next free node
    /// id after their shape nodes.
    private static func drawSegments(
        _ lattice: CityLattice, using random: inout SeededGenerator
    ) -> ([Segment], nextID: Int64) {
        let rows = lattice.rows, columns = lattice.columns
        var segments: [Segment] = []
        segments.reserveCapacity(2 * rows * columns)
        var nextID = Int64(rows * columns + 1)
        for horizontal in [true, false] {
            for row in 0..<(horizontal ? rows : rows - 1) {
                for column in 0..<(horizontal ? columns - 1 : columns) {
                    let street = horizontal ? row : column
                    let roll = Double.random(in: 0..<1, using: &random)
                    let present: Bool
                    if CityLattice.isArterial(street) {
                        present = true
                    } else if horizontal {
                        // East-west residential streets, reaching each arterial they meet half the time.
                        let touchesArterial = CityLattice.isArterial(column) || CityLattice.isArterial(column + 1)
                        present = roll >= (touchesArterial ? 0.5 : 0.03)
                    } else {
                        // Sparse north-south connectors.
                        present = roll < 0.22
                    }
                    let shapes = Int32.random(in: 2...12, using: &random)
                    let amplitude = Float.random(in: -0.12...0.12, using: &random)
                    let to = horizontal ? lattice.junction(row, column + 1) : lattice.junction(row + 1, column)
                    segments.append(
                        Segment(
                            from: lattice.junction(row, column), to: to, firstShape: nextID,
                            shapes: present ? shapes : 0, amplitude: amplitude, present: present))
                    if present { nextID += Int64(shapes) }
                }
            }
        }
        return (segments, nextID)
    }

    /// Junction nodes, with signals where two arterials meet and stop signs at some residential crossings.
    mutating func writeJunctions() throws {
        for row in 0..<lattice.rows {
            for column in 0..<lattice.columns {
                let id = lattice.junction(row, column)
                let (dr, dc) = jitter[Int(id - 1)]
                let at = lattice.position(row: Double(row) + dr, column: Double(column) + dc)
                var tags: [String: String] = [:]
                let roll = Double.random(in: 0..<1, using: &random)
                if CityLattice.isArterial(row), CityLattice.isArterial(column), roll < 0.5 {
                    tags["highway"] = "traffic_signals"; signalled.insert(id)
                } else if !CityLattice.isArterial(row), !CityLattice.isArterial(column), roll < 0.05 {
                    tags["highway"] = "stop"
                }
                try writer.write(OSMNode(id: id, lat: at.lat, lon: at.lon, tags: tags)); report.nodes += 1
            }
        }
    }

    /// Shape nodes: along the chord between the jittered junctions, bent sideways by a half sine.
    mutating func writeShapeNodes() throws {
        for segment in segments where segment.present {
            let (r0, c0) = lattice.grid(of: segment.from), (r1, c1) = lattice.grid(of: segment.to)
            let a = jitter[Int(segment.from - 1)], b = jitter[Int(segment.to - 1)]
            let start = (Double(r0) + a.0, Double(c0) + a.1), end = (Double(r1) + b.0, Double(c1) + b.1)
            let count = Int(segment.shapes)
            for index in 0..<count {
                let t = Double(index + 1) / Double(count + 1)
                let bend = Double(segment.amplitude) * sin(.pi * t)
                // Perpendicular to the segment: a horizontal one bends in rows, a vertical one in columns.
                let row = start.0 + (end.0 - start.0) * t + (r0 == r1 ? bend : 0)
                let column = start.1 + (end.1 - start.1) * t + (r0 == r1 ? 0 : bend)
                let at = lattice.position(row: row, column: column)
                try writer.write(OSMNode(id: segment.firstShape + Int64(index), lat: at.lat, lon: at.lon));
                report.nodes += 1
            }
        }
    }

    /// The ring motorway: two carriageways of nodes every ~60 m at 0.42 of the city's half-width.
    mutating func writeRingNodes() throws {
        for carriageway in 0..<2 {
            let offset = carriageway == 0 ? -0.1 : 0.1
            for index in 0..<ringCount {
                let angle = 2 * .pi * Double(index) / Double(ringCount)
                let at = lattice.position(
                    row: Double(lattice.rows) / 2 + (ringRadius + offset) * sin(angle),
                    column: Double(lattice.columns) / 2 + (ringRadius + offset) * cos(angle))
                try writer.write(OSMNode(id: nextID, lat: at.lat, lon: at.lon)); report.nodes += 1
                ringIDs[carriageway].append(nextID)
                nextID += 1
            }
        }
    }

    /// A fifth of the residential streets one-way, half of those against their direction.
    mutating func chooseOneWayStreets() {
        for horizontal in [true, false] {
            for street in 0..<(horizontal ? lattice.rows : lattice.columns) where CityLattice.streetClass(street) == 0 {
                let roll = Double.random(in: 0..<1, using: &random)
                if roll < 0.1 {
                    streetOneway[horizontal]![street] = "yes"
                } else if roll < 0.2 {
                    streetOneway[horizontal]![street] = "-1"
                }
            }
        }
    }

    /// Street segments as ways, named by street; one-way streets alternate direction.
    mutating func writeStreets() throws {
        segmentWay = [Int64](repeating: 0, count: segments.count)
        var index = 0
        while index < segments.count {
            guard segments[index].present else { index += 1; continue }
            let last = try writeStreet(from: index)
            for piece in index...last { segmentWay[piece] = wayID }
            wayID += 1
            index = last + 1
        }
    }

    /// The way starting at segment `first`: a residential street runs on as one way until a gap or an arterial it
    /// crosses. Returns its last segment.
    private mutating func writeStreet(from first: Int) throws -> Int {
        let segment = segments[first]
        let horizontal = first < lattice.horizontalCount
        let (row, column) = lattice.grid(of: segment.from)
        let street = horizontal ? row : column
        var tags: [String: String] = ["name": horizontal ? "Row \(street) Street" : "Column \(street) Avenue"]
        switch CityLattice.streetClass(street) {
        case 2: tags["highway"] = "primary"; tags["maxspeed"] = "70"
        case 1: tags["highway"] = "secondary"; tags["maxspeed"] = "50"
        default:
            tags["highway"] = "residential"
            if street % 2 == 0 { tags["maxspeed"] = "30" }
            if let oneway = streetOneway[horizontal]![street] { tags["oneway"] = oneway }
        }
        var refs = [segment.from]
        var last = first
        while true {
            let piece = segments[last]
            for shape in 0..<Int64(piece.shapes) { refs.append(piece.firstShape + shape) }
            refs.append(piece.to)
            guard horizontal, !CityLattice.isArterial(street), last + 1 < lattice.horizontalCount,
                segments[last + 1].present
            else {
                break
            }
            let next = lattice.grid(of: segments[last + 1].from)
            guard next.row == row, !CityLattice.isArterial(next.column) else { break }
            last += 1
        }
        try writer.write(OSMWay(id: wayID, refs: refs, tags: tags)); report.ways += 1
        return last
    }

    /// The ring's carriageways (0 anticlockwise, 1 clockwise), each split into a few ways.
    mutating func writeRing() throws {
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
    }

    /// Ramps to the nearest arterial junction wherever the ring passes one, off and on each carriageway.
    mutating func writeRamps() throws {
        let arterials = (0..<lattice.rows).filter { CityLattice.isArterial($0) }
        for (ring, ids) in ringIDs.enumerated() {
            let forward = ring == 0
            for row in arterials {
                for column in arterials {
                    // The ring node nearest to this arterial junction, if it is within half a block.
                    let dr = Double(row) - Double(lattice.rows) / 2, dc = Double(column) - Double(lattice.columns) / 2
                    let distance = (dr * dr + dc * dc).squareRoot()
                    guard abs(distance - ringRadius) < 2.5 else { continue }
                    var angle = atan2(dr, dc)
                    if angle < 0 { angle += 2 * .pi }
                    let index = Int((angle / (2 * .pi) * Double(ringCount)).rounded()) % ringCount
                    let next = forward ? (index + 2) % ringCount : (index - 2 + ringCount) % ringCount
                    let previous = forward ? (index - 2 + ringCount) % ringCount : (index + 2) % ringCount
                    let j = lattice.junction(row, column)
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
    }

    /// Turn restrictions at arterial junctions without signals: no left turn, or only straight on.
    mutating func writeRestrictions() throws {
        var relationID: Int64 = 1
        for row in 1..<(lattice.rows - 1) {
            for column in 1..<(lattice.columns - 1) where CityLattice.isArterial(row) && CityLattice.isArterial(column)
            {
                guard !signalled.contains(lattice.junction(row, column)),
                    Double.random(in: 0..<1, using: &random) < 0.4
                else {
                    continue
                }
                // Arriving heading (dr, dc): from the junction behind.
                let directions = [(1, 0), (0, 1), (-1, 0), (0, -1)]
                let (dr, dc) = directions[Int.random(in: 0..<4, using: &random)]
                let straight = Double.random(in: 0..<1, using: &random) < 0.3
                // left of (dr, dc) is (dc, -dr) with rows north, columns east
                let (tr, tc) = straight ? (dr, dc) : (dc, -dr)
                guard let fromIndex = lattice.segmentIndex(from: (row, column), to: (row - dr, column - dc)),
                    let toIndex = lattice.segmentIndex(from: (row, column), to: (row + tr, column + tc)),
                    segments[fromIndex].present, segments[toIndex].present
                else { continue }
                try writer.write(
                    OSMRelation(
                        id: relationID,
                        members: [
                            OSMMember(type: .way, ref: segmentWay[fromIndex], role: "from"),
                            OSMMember(type: .node, ref: lattice.junction(row, column), role: "via"),
                            OSMMember(type: .way, ref: segmentWay[toIndex], role: "to"),
                        ], tags: ["type": "restriction", "restriction": straight ? "only_straight_on" : "no_left_turn"])
                )
                relationID += 1
                report.relations += 1
            }
        }
    }

    /// Closes the file; what was written.
    func finish() throws -> CityReport {
        try writer.finish()
        return report
    }
}
