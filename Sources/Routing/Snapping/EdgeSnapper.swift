import Foundation

/// A coordinate snapped onto one directed edge of a road network: where on the edge, and how far from the input.
public struct EdgeSnap: Sendable, Hashable {
    /// The directed edge the coordinate snapped to.
    public var edge: Int32
    /// The point on the edge's geometry nearest the input.
    public var coordinate: RoadCoordinate
    /// Metres from the input to `coordinate`.
    public var distanceMeters: Double
    /// How far along the edge the point lies, from 0 (its tail node) to 1 (its head node).
    public var fraction: Double
    /// Metres along the edge from its tail node to the point (`fraction` of the edge's length).
    public var metersAlongEdge: Double
    /// The edge's bearing at the point, degrees clockwise from north (the direction of travel).
    public var bearing: Double

    /// A snap with all its parts.
    public init(
        edge: Int32, coordinate: RoadCoordinate, distanceMeters: Double, fraction: Double, metersAlongEdge: Double,
        bearing: Double
    ) {
        self.edge = edge
        self.coordinate = coordinate
        self.distanceMeters = distanceMeters
        self.fraction = fraction
        self.metersAlongEdge = metersAlongEdge
        self.bearing = bearing
    }
}

/// Finds the nearest routable directed edge to a coordinate, through a uniform grid over every edge's geometry
/// segments, built once per network.
///
/// Both directions of a two-way street are candidates (each is its own edge with its own geometry). With a
/// heading, the nearest edge whose bearing at the snapped point is within the tolerance wins; without one, or
/// when no edge within the limit has such a bearing, the nearest edge does.
public struct EdgeSnapper: Sendable {
    /// The default search radius in metres.
    public static let defaultMaxDistance = 100.0
    /// The default heading tolerance in degrees either side.
    public static let defaultHeadingTolerance = 45.0

    private let network: RoadNetwork
    private let plane: LocalPlane
    private let cellSize: Double
    private let originX: Double, originY: Double
    private let columns: Int, rows: Int
    /// CSR offsets over cells into `cellSegments`.
    private let cellFirst: [Int32]
    /// Global geometry point indices `i` of the segments `i → i+1` in each cell.
    private let cellSegments: [Int32]
    /// The edge owning each geometry point index.
    private let pointEdge: [Int32]
    /// Each geometry point's position in the plane.
    private let pointX: [Double], pointY: [Double]
    /// Metres along its edge at each geometry point (haversine, from the edge's first point).
    private let pointAlong: [Double]
    /// Each edge's reverse (same nodes the other way, same geometry reversed), or -1.
    private let reverseEdge: [Int32]

    /// Builds the index over every edge of `network`, in grid cells of `cellSize` metres.
    public init(network: RoadNetwork, cellSize: Double = 100) {
        self.network = network
        self.cellSize = cellSize
        let lats = network.geometryLats, lons = network.geometryLons
        let meanLat = lats.isEmpty ? 0 : lats.reduce(0, +) / Double(lats.count)
        plane = LocalPlane(referenceLatitude: meanLat)
        var xs = [Double](repeating: 0, count: lats.count), ys = [Double](repeating: 0, count: lats.count)
        for index in lats.indices { (xs[index], ys[index]) = plane.project(lat: lats[index], lon: lons[index]) }
        originX = (xs.min() ?? 0) - cellSize
        originY = (ys.min() ?? 0) - cellSize
        columns = max(1, Int(((xs.max() ?? 0) + cellSize - originX) / cellSize) + 1)
        rows = max(1, Int(((ys.max() ?? 0) + cellSize - originY) / cellSize) + 1)

        var owner = [Int32](repeating: -1, count: lats.count)
        var along = [Double](repeating: 0, count: lats.count)
        var cellOfSegment: [(cell: Int32, point: Int32)] = []
        for edge in 0..<network.edgeCount {
            let first = Int(network.geometryStart[edge]), end = Int(network.geometryStart[edge + 1])
            for point in first..<end {
                owner[point] = Int32(edge)
                if point > first {
                    along[point] =
                        along[point - 1]
                        + RoadNetwork.distance(
                            RoadCoordinate(lat: lats[point - 1], lon: lons[point - 1]),
                            RoadCoordinate(lat: lats[point], lon: lons[point]))
                }
            }
            for point in first..<(end - 1) {
                let minColumn = Int((min(xs[point], xs[point + 1]) - originX) / cellSize)
                let maxColumn = Int((max(xs[point], xs[point + 1]) - originX) / cellSize)
                let minRow = Int((min(ys[point], ys[point + 1]) - originY) / cellSize)
                let maxRow = Int((max(ys[point], ys[point + 1]) - originY) / cellSize)
                for row in minRow...maxRow {
                    for column in minColumn...maxColumn {
                        cellOfSegment.append((Int32(row * columns + column), Int32(point)))
                    }
                }
            }
        }
        var first = [Int32](repeating: 0, count: columns * rows + 1)
        for entry in cellOfSegment { first[Int(entry.cell) + 1] += 1 }
        for cell in 0..<(columns * rows) { first[cell + 1] += first[cell] }
        var fill = first
        var segments = [Int32](repeating: 0, count: cellOfSegment.count)
        for entry in cellOfSegment {
            segments[Int(fill[Int(entry.cell)])] = entry.point
            fill[Int(entry.cell)] += 1
        }
        cellFirst = first
        cellSegments = segments
        pointEdge = owner
        pointX = xs
        pointY = ys
        pointAlong = along
        reverseEdge = Self.reverseEdges(of: network)
    }

    private static func reverseEdges(of network: RoadNetwork) -> [Int32] {
        var byEnds: [Int64: [Int32]] = [:]
        for edge in 0..<network.edgeCount {
            byEnds[Int64(network.edgeFrom[edge]) << 32 | Int64(network.edgeTo[edge]), default: []].append(Int32(edge))
        }
        var result = [Int32](repeating: -1, count: network.edgeCount)
        for edge in 0..<network.edgeCount {
            let key = Int64(network.edgeTo[edge]) << 32 | Int64(network.edgeFrom[edge])
            guard let others = byEnds[key] else { continue }
            let reversed = Array(network.geometry(ofEdge: Int32(edge)).reversed())
            if let match = others.first(where: { $0 != Int32(edge) && network.geometry(ofEdge: $0) == reversed }) {
                result[edge] = match
            }
        }
        return result
    }

    /// The nearest edge to `coordinate` within `maxDistance` metres (preferring, with a `heading` in degrees from
    /// north, edges whose bearing there is within `headingTolerance` of it), or nil when no edge is that close.
    public func snap(
        _ coordinate: RoadCoordinate, heading: Double? = nil, maxDistance: Double = defaultMaxDistance,
        headingTolerance: Double = defaultHeadingTolerance
    ) -> EdgeSnap? {
        let candidates = self.candidates(near: coordinate, maxDistance: maxDistance)
        guard let heading else { return candidates.first }
        return candidates.first { Self.angleBetween($0.bearing, heading) <= headingTolerance } ?? candidates.first
    }

    /// Every edge within `maxDistance` metres of `coordinate`, each at its nearest point, nearest first (ties by
    /// edge index).
    public func candidates(near coordinate: RoadCoordinate, maxDistance: Double = defaultMaxDistance) -> [EdgeSnap] {
        var snaps: [EdgeSnap] = []
        for hit in hits(near: coordinate, maxDistance: maxDistance) {
            let snap = makeSnap(edge: hit.edge, point: Int(hit.point), t: hit.t, from: coordinate)
            if snap.distanceMeters <= maxDistance { snaps.append(snap) }
        }
        snaps.sort { ($0.distanceMeters, $0.edge) < ($1.distanceMeters, $1.edge) }
        return snaps
    }

    /// The edges that pass `include` and lie within `slack` metres of the nearest such edge (itself within
    /// `maxDistance`), nearest first (ties by edge index): what `candidates` would keep of them, without working
    /// out the exact snap of every farther edge.
    public func nearestCandidates(
        near coordinate: RoadCoordinate, maxDistance: Double = defaultMaxDistance, slack: Double,
        where include: (Int32) -> Bool = { _ in true }
    ) -> [EdgeSnap] {
        var snaps: [EdgeSnap] = []
        var bound = maxDistance
        for hit in hits(near: coordinate, maxDistance: maxDistance) where include(hit.edge) {
            // The plane's distance overstates the true one by at most the margin `hits` allows for.
            if hit.squared.squareRoot() > bound * Self.planeMargin + 1 { break }
            let snap = makeSnap(edge: hit.edge, point: Int(hit.point), t: hit.t, from: coordinate)
            guard snap.distanceMeters <= bound else { continue }
            snaps.append(snap)
            bound = min(bound, snap.distanceMeters + slack)
        }
        snaps.removeAll { $0.distanceMeters > bound }
        snaps.sort { ($0.distanceMeters, $0.edge) < ($1.distanceMeters, $1.edge) }
        return snaps
    }

    /// How much the plane's distance may exceed the true one: its scale drifts slightly away from the reference
    /// latitude.
    private static let planeMargin = 1.05

    /// The nearest point of each edge with a segment within reach of `coordinate` in the plane: (edge, squared plane
    /// distance, the segment's first point, how far along it), nearest first, ties by edge.
    private func hits(
        near coordinate: RoadCoordinate, maxDistance: Double
    ) -> [(edge: Int32, squared: Double, point: Int32, t: Double)] {
        let (x, y) = plane.project(lat: coordinate.lat, lon: coordinate.lon)
        // Search a little wider than asked and let the exact distance decide.
        let reach = maxDistance * Self.planeMargin + 1
        let minColumn = max(0, Int((x - reach - originX) / cellSize)),
            maxColumn = min(columns - 1, Int((x + reach - originX) / cellSize))
        let minRow = max(0, Int((y - reach - originY) / cellSize)),
            maxRow = min(rows - 1, Int((y + reach - originY) / cellSize))
        guard minColumn <= maxColumn, minRow <= maxRow else { return [] }
        var hits: [(edge: Int32, squared: Double, point: Int32, t: Double)] = []
        for row in minRow...maxRow {
            for column in minColumn...maxColumn {
                let cell = row * columns + column
                for index in Int(cellFirst[cell])..<Int(cellFirst[cell + 1]) {
                    let point = Int(cellSegments[index])
                    let ax = pointX[point], ay = pointY[point], dx = pointX[point + 1] - ax, dy = pointY[point + 1] - ay
                    let lengthSquared = dx * dx + dy * dy
                    let t = lengthSquared > 0 ? min(1, max(0, ((x - ax) * dx + (y - ay) * dy) / lengthSquared)) : 0
                    let px = ax + t * dx - x, py = ay + t * dy - y
                    let squared = px * px + py * py
                    guard squared <= reach * reach else { continue }
                    hits.append((pointEdge[point], squared, Int32(point), t))
                }
            }
        }
        // One hit per edge, its nearest segment (a segment crossing cells is found once per cell).
        hits.sort { ($0.edge, $0.squared, $0.point) < ($1.edge, $1.squared, $1.point) }
        var write = 0
        for read in hits.indices where read == 0 || hits[read].edge != hits[read - 1].edge {
            hits[write] = hits[read]
            write += 1
        }
        hits.removeLast(hits.count - write)
        hits.sort { ($0.squared, $0.edge) < ($1.squared, $1.edge) }
        return hits
    }

    /// The reverse of `edge` when the network has one: the edge between the same nodes the other way with the
    /// same geometry reversed (the other direction of a two-way street).
    public func reverse(of edge: Int32) -> Int32? {
        let other = reverseEdge[Int(edge)]
        return other >= 0 ? other : nil
    }

    /// The same position as `snap` on another edge with the same geometry reversed.
    public func mirrored(_ snap: EdgeSnap, onto reverse: Int32) -> EdgeSnap {
        let fraction = 1 - snap.fraction
        let bearing = snap.bearing >= 180 ? snap.bearing - 180 : snap.bearing + 180
        return EdgeSnap(
            edge: reverse, coordinate: snap.coordinate, distanceMeters: snap.distanceMeters, fraction: fraction,
            metersAlongEdge: fraction * network.edgeLengthMeters[Int(reverse)], bearing: bearing)
    }

    private func makeSnap(edge: Int32, point: Int, t: Double, from input: RoadCoordinate) -> EdgeSnap {
        let lats = network.geometryLats, lons = network.geometryLons
        let projected = RoadCoordinate(
            lat: lats[point] + t * (lats[point + 1] - lats[point]),
            lon: lons[point] + t * (lons[point + 1] - lons[point]))
        let segmentLength = pointAlong[point + 1] - pointAlong[point]
        let last = Int(network.geometryStart[Int(edge) + 1]) - 1
        let total = pointAlong[last]
        let fraction = total > 0 ? min(1, max(0, (pointAlong[point] + t * segmentLength) / total)) : 0
        return EdgeSnap(
            edge: edge, coordinate: projected, distanceMeters: RoadNetwork.distance(input, projected),
            fraction: fraction,
            metersAlongEdge: fraction * network.edgeLengthMeters[Int(edge)],
            bearing: RoadNetwork.bearing(lats[point], lons[point], lats[point + 1], lons[point + 1]))
    }

    /// The absolute difference of two bearings in degrees, in [0, 180].
    static func angleBetween(_ a: Double, _ b: Double) -> Double {
        let difference = abs((a - b).truncatingRemainder(dividingBy: 360))
        return difference > 180 ? 360 - difference : difference
    }
}

/// An equirectangular projection around one latitude, in metres: accurate to a fraction of a percent across a city.
struct LocalPlane: Sendable {
    private static let metersPerDegree = 6_371_008.8 * Double.pi / 180
    private let xScale: Double

    init(referenceLatitude: Double) {
        xScale = Self.metersPerDegree * cos(referenceLatitude * Double.pi / 180)
    }

    func project(lat: Double, lon: Double) -> (x: Double, y: Double) {
        (lon * xScale, lat * Self.metersPerDegree)
    }
}
