import Foundation

/// A WGS 84 position on a road, in degrees.
public struct RoadCoordinate: Sendable, Hashable {
    /// Latitude in degrees.
    public var lat: Double
    /// Longitude in degrees.
    public var lon: Double

    /// A position from latitude and longitude in degrees.
    public init(lat: Double, lon: Double) {
        self.lat = lat
        self.lon = lon
    }
}

/// A turn restriction at a via node: `no` forbids one turn, `only` forbids every other turn from the from-edge.
public struct TurnRestriction: Sendable, Hashable {
    /// Whether the restriction forbids the turn (`no_*`) or makes it the only one allowed (`only_*`).
    public enum Kind: Sendable, Hashable {
        /// `no_left_turn`, `no_u_turn`, ...: the turn from `fromEdge` to `toEdge` is forbidden.
        case no
        /// `only_straight_on`, ...: from `fromEdge` at `viaNode`, `toEdge` is the only allowed continuation.
        case only
    }

    /// The directed edge arriving at the via node.
    public var fromEdge: Int32
    /// The node where the turn happens.
    public var viaNode: Int32
    /// The directed edge leaving the via node.
    public var toEdge: Int32
    /// `no` or `only`.
    public var kind: Kind

    /// A restriction on the turn `fromEdge` → `toEdge` at `viaNode`.
    public init(fromEdge: Int32, viaNode: Int32, toEdge: Int32, kind: Kind) {
        self.fromEdge = fromEdge
        self.viaNode = viaNode
        self.toEdge = toEdge
        self.kind = kind
    }
}

/// The cost in seconds of a turn, by its angle, and of a U-turn.
///
/// The angle is the change of heading at the via node in degrees, in (-180, 180]: 0 straight on, positive to the
/// right, negative to the left. A U-turn is a turn back onto the reverse of the arriving edge (the same two nodes).
public struct TurnCosts: Sendable {
    /// Seconds for a U-turn, whatever its angle.
    public var uTurnSeconds: Double
    /// Seconds for a turn of the given angle.
    public var angleSeconds: @Sendable (Double) -> Double

    /// Turn costs from a U-turn cost and a function of the angle.
    public init(uTurnSeconds: Double, angleSeconds: @escaping @Sendable (Double) -> Double) {
        self.uTurnSeconds = uTurnSeconds
        self.angleSeconds = angleSeconds
    }

    /// The default: the standard car profile's turn costs for driving on the right (`CarProfile.turnCostTable`
    /// and `uTurnSeconds`, the one place those numbers live).
    public static let standard = TurnCosts(profile: .standard)

    /// The turn costs of `profile` on roads where traffic keeps to `drivingSide`.
    public init(profile: CarProfile, drivingSide: CarProfile.DrivingSide = .right) {
        self.init(uTurnSeconds: profile.uTurnSeconds) { profile.turnCost(angleDegrees: $0, drivingSide: drivingSide) }
    }

    /// No turn costs at all (U-turns free too): for tests and for comparing against node-based engines.
    public static let none = TurnCosts(uTurnSeconds: 0) { _ in 0 }

    /// Seconds for the turn of the given angle, or the U-turn cost when `isUTurn`.
    public func seconds(angleDegrees: Double, isUTurn: Bool) -> Double {
        isUTurn ? uTurnSeconds : angleSeconds(angleDegrees)
    }
}

/// The road network a builder produces and the router reads: nodes, directed edges, turn restrictions, node
/// delays and turn costs, in struct-of-arrays form with `Int32` indices.
///
/// Every road direction a car may drive is its own directed edge; a two-way street is two edges.
public struct RoadNetwork: Sendable {
    /// Each node's source id (the OSM node id).
    public private(set) var nodeIDs: [Int64] = []
    /// Each node's latitude in degrees.
    public private(set) var nodeLats: [Double] = []
    /// Each node's longitude in degrees.
    public private(set) var nodeLons: [Double] = []
    /// Seconds of delay for passing through each node (traffic signals, stop signs, give-way).
    public private(set) var nodeDelaySeconds: [Double] = []

    /// Each edge's tail node.
    public private(set) var edgeFrom: [Int32] = []
    /// Each edge's head node.
    public private(set) var edgeTo: [Int32] = []
    /// Each edge's length in metres.
    public private(set) var edgeLengthMeters: [Double] = []
    /// Each edge's travel time in seconds: the weight source.
    public private(set) var edgeDurationSeconds: [Double] = []
    /// Each edge's road class, as the profile's raw value.
    public private(set) var edgeRoadClass: [UInt8] = []
    /// Each edge's index into `names`.
    public private(set) var edgeNameIndex: [Int32] = []
    /// Whether each edge is for destination traffic only (`access=destination` and its kin): a route may enter
    /// it only to reach somewhere on it or beyond it, never as a short cut.
    public private(set) var edgeIsDestinationOnly: [Bool] = []
    /// Whether each edge is part of a roundabout (`junction=roundabout|circular`), for guidance's exit counts.
    public private(set) var edgeIsRoundabout: [Bool] = []
    /// Where each edge's geometry starts in `geometryLats`/`geometryLons`; edge `e` is
    /// `geometryStart[e]..<geometryStart[e+1]`.
    public private(set) var geometryStart: [Int32] = [0]
    /// Geometry latitudes of every edge, endpoints included.
    public private(set) var geometryLats: [Double] = []
    /// Geometry longitudes of every edge, endpoints included.
    public private(set) var geometryLons: [Double] = []
    /// What guidance reads of each edge for every edge of every route, worked out once and side by side (one cache
    /// line an edge rather than one an array): derived from the arrays above.
    private(set) var guides: [EdgeGuide] = []
    /// Street names, each once; index 0 is the empty name.
    public private(set) var names: [String] = [""]
    private var nameLookup: [String: Int32] = ["": 0]

    /// Turn restrictions on pairs of edges.
    public private(set) var restrictions: [TurnRestriction] = []
    /// The turn cost function.
    public var turnCosts: TurnCosts

    /// An empty network with the given turn costs.
    public init(turnCosts: TurnCosts = .standard) {
        self.turnCosts = turnCosts
    }

    /// The number of nodes.
    public var nodeCount: Int { nodeIDs.count }
    /// The number of directed edges.
    public var edgeCount: Int { edgeFrom.count }

    /// Adds a node and returns its index.
    @discardableResult
    public mutating func addNode(id: Int64, lat: Double, lon: Double, delaySeconds: Double = 0) -> Int32 {
        nodeIDs.append(id)
        nodeLats.append(lat)
        nodeLons.append(lon)
        nodeDelaySeconds.append(delaySeconds)
        return Int32(nodeIDs.count - 1)
    }

    /// Sets the delay for passing through a node.
    public mutating func setDelay(node: Int32, seconds: Double) {
        nodeDelaySeconds[Int(node)] = seconds
    }

    /// The position of a node.
    public func coordinate(ofNode node: Int32) -> RoadCoordinate {
        RoadCoordinate(lat: nodeLats[Int(node)], lon: nodeLons[Int(node)])
    }

    /// Adds a directed edge and returns its index. `geometry` includes both endpoints; empty means the straight
    /// segment between the nodes. A missing `lengthMeters` is measured along the geometry.
    @discardableResult
    public mutating func addEdge(
        from: Int32, to: Int32, lengthMeters: Double? = nil, durationSeconds: Double,
        roadClass: UInt8 = 0, name: String = "", geometry: [RoadCoordinate] = [],
        destinationOnly: Bool = false, roundabout: Bool = false
    ) -> Int32 {
        precondition(Int(from) < nodeCount && Int(to) < nodeCount, "edge endpoints must be nodes")
        let points = geometry.isEmpty ? [coordinate(ofNode: from), coordinate(ofNode: to)] : geometry
        edgeFrom.append(from)
        edgeTo.append(to)
        edgeLengthMeters.append(lengthMeters ?? Self.length(of: points))
        edgeDurationSeconds.append(durationSeconds)
        edgeRoadClass.append(roadClass)
        edgeNameIndex.append(intern(name))
        edgeIsDestinationOnly.append(destinationOnly)
        edgeIsRoundabout.append(roundabout)
        for point in points {
            geometryLats.append(point.lat)
            geometryLons.append(point.lon)
        }
        geometryStart.append(Int32(geometryLats.count))
        guides.append(guide(ofEdge: Int32(edgeFrom.count - 1)))
        return Int32(edgeFrom.count - 1)
    }

    /// Adds a turn restriction; the from-edge must arrive at the via node and the to-edge leave it.
    public mutating func addRestriction(_ restriction: TurnRestriction) {
        precondition(
            edgeTo[Int(restriction.fromEdge)] == restriction.viaNode
                && edgeFrom[Int(restriction.toEdge)] == restriction.viaNode,
            "a restriction's edges must meet at its via node")
        restrictions.append(restriction)
    }

    /// The street name of an edge ("" when it has none).
    public func name(ofEdge edge: Int32) -> String {
        names[Int(edgeNameIndex[Int(edge)])]
    }

    /// The geometry of an edge, endpoints included.
    public func geometry(ofEdge edge: Int32) -> [RoadCoordinate] {
        (Int(geometryStart[Int(edge)])..<Int(geometryStart[Int(edge) + 1])).map {
            RoadCoordinate(lat: geometryLats[$0], lon: geometryLons[$0])
        }
    }

    /// The initial bearing of an edge's first segment, degrees clockwise from north.
    func startBearing(ofEdge edge: Int32) -> Double { guides[Int(edge)].startBearing }

    /// The bearing of an edge's last segment, degrees clockwise from north.
    func endBearing(ofEdge edge: Int32) -> Double { guides[Int(edge)].endBearing }

    /// An edge's guide, from the arrays. An edge without two points of geometry (only in a network made to be
    /// refused when written, by the tests of the file's checks) has bearings of 0.
    private func guide(ofEdge edge: Int32) -> EdgeGuide {
        let index = Int(edge)
        let first = Int(geometryStart[index]), last = Int(geometryStart[index + 1]) - 1
        let drawn = first >= 0 && first < last && last < geometryLats.count
        return EdgeGuide(
            from: edgeFrom[index], to: edgeTo[index], name: edgeNameIndex[index],
            geometryStart: Int32(first), geometryEnd: Int32(last + 1), roadClass: edgeRoadClass[index],
            isRoundabout: edgeIsRoundabout[index], lengthMeters: edgeLengthMeters[index],
            startBearing: drawn
                ? Self.bearing(
                    geometryLats[first], geometryLons[first], geometryLats[first + 1], geometryLons[first + 1]) : 0,
            endBearing: drawn
                ? Self.bearing(geometryLats[last - 1], geometryLons[last - 1], geometryLats[last], geometryLons[last])
                : 0)
    }

    private mutating func intern(_ name: String) -> Int32 {
        if let index = nameLookup[name] { return index }
        let index = Int32(names.count)
        names.append(name)
        nameLookup[name] = index
        return index
    }

    /// Great-circle length of a polyline in metres (haversine, mean Earth radius).
    static func length(of points: [RoadCoordinate]) -> Double {
        zip(points, points.dropFirst()).reduce(0) { $0 + distance($1.0, $1.1) }
    }

    /// Great-circle distance in metres.
    public static func distance(_ a: RoadCoordinate, _ b: RoadCoordinate) -> Double {
        let radians = Double.pi / 180
        let dLat = (b.lat - a.lat) * radians, dLon = (b.lon - a.lon) * radians
        let h =
            sin(dLat / 2) * sin(dLat / 2) + cos(a.lat * radians) * cos(b.lat * radians) * sin(dLon / 2) * sin(dLon / 2)
        return 2 * 6_371_008.8 * asin(min(1, h.squareRoot()))
    }

    static func bearing(_ lat1: Double, _ lon1: Double, _ lat2: Double, _ lon2: Double) -> Double {
        let radians = Double.pi / 180
        let phi1 = lat1 * radians, phi2 = lat2 * radians, dLon = (lon2 - lon1) * radians
        let y = sin(dLon) * cos(phi2)
        let x = cos(phi1) * sin(phi2) - sin(phi1) * cos(phi2) * cos(dLon)
        let degrees = atan2(y, x) / radians
        return degrees < 0 ? degrees + 360 : degrees
    }
}

extension RoadNetwork {
    /// A network from whole arrays, which the caller has already checked for consistency (`RoadGraphFile`'s reader).
    init(
        nodeIDs: [Int64], nodeLats: [Double], nodeLons: [Double], nodeDelaySeconds: [Double],
        edgeFrom: [Int32], edgeTo: [Int32], edgeLengthMeters: [Double], edgeDurationSeconds: [Double],
        edgeRoadClass: [UInt8], edgeNameIndex: [Int32], geometryStart: [Int32], geometryLats: [Double],
        geometryLons: [Double], names: [String], restrictions: [TurnRestriction], turnCosts: TurnCosts,
        edgeIsDestinationOnly: [Bool], edgeIsRoundabout: [Bool]
    ) {
        self.init(turnCosts: turnCosts)
        self.nodeIDs = nodeIDs
        self.nodeLats = nodeLats
        self.nodeLons = nodeLons
        self.nodeDelaySeconds = nodeDelaySeconds
        self.edgeFrom = edgeFrom
        self.edgeTo = edgeTo
        self.edgeLengthMeters = edgeLengthMeters
        self.edgeDurationSeconds = edgeDurationSeconds
        self.edgeRoadClass = edgeRoadClass
        self.edgeNameIndex = edgeNameIndex
        self.edgeIsDestinationOnly = edgeIsDestinationOnly
        self.edgeIsRoundabout = edgeIsRoundabout
        self.geometryStart = geometryStart
        self.geometryLats = geometryLats
        self.geometryLons = geometryLons
        self.names = names
        self.nameLookup = Dictionary(
            names.enumerated().map { ($0.element, Int32($0.offset)) }, uniquingKeysWith: { first, _ in first })
        self.restrictions = restrictions
        self.guides = (0..<Int32(edgeFrom.count)).map(guide(ofEdge:))
    }
}

/// One edge as guidance reads it: its ends, name, geometry span, class, roundabout flag, length and bearings.
struct EdgeGuide: Sendable {
    var from: Int32
    var to: Int32
    /// The edge's index into `names`, which holds each name once (0: no name), so names compare by index.
    var name: Int32
    var geometryStart: Int32
    var geometryEnd: Int32
    var roadClass: UInt8
    var isRoundabout: Bool
    var lengthMeters: Double
    var startBearing: Double
    var endBearing: Double
}
