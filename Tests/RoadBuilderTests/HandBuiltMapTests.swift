import Foundation
import OSMPBF
import Testing
@testable import RoadBuilder
@testable import Routing

/// The builder's island rule and destination-only streets on small maps written as OSM PBF in the test.
@Suite struct HandBuiltMapTests {
    /// Metres per degree of latitude, and of longitude at 60° north (where these maps lie).
    static let latMeters = 111_195.0, lonMeters = 55_597.0

    /// A map's nodes, ways and a way-id counter, positioned in metres east and north of 60° N 24° E.
    struct Map {
        var nodes: [OSMNode] = []
        var ways: [OSMWay] = []

        /// Adds a node `east`/`north` metres from the origin and returns its id.
        mutating func node(east: Double, north: Double, tags: [String: String] = [:]) -> Int64 {
            let id = Int64(nodes.count + 1)
            nodes.append(
                OSMNode(
                    id: id, lat: 60 + north / HandBuiltMapTests.latMeters, lon: 24 + east / HandBuiltMapTests.lonMeters,
                    tags: tags))
            return id
        }

        /// Adds a way over `refs` with `tags`.
        mutating func way(_ refs: [Int64], _ tags: [String: String]) {
            ways.append(OSMWay(id: Int64(1000 + ways.count), refs: refs, tags: tags))
        }

        /// The coordinate of node `id`.
        func coordinate(_ id: Int64) -> RoadCoordinate {
            let node = nodes[Int(id - 1)]
            return RoadCoordinate(lat: node.lat, lon: node.lon)
        }

        /// Built with the standard profile and the default island thresholds.
        func build() throws -> RoadNetworkBuilder.Built {
            let bytes = try OSMPBFWriter.encode(nodes: nodes, ways: ways)
            return try RoadNetworkBuilder.build(
                reader: OSMReader(bytes: bytes), profile: .standard,
                minimumComponentSize: RoadNetworkBuilder.defaultMinimumComponentSize,
                now: { ContinuousClock.now }, progress: { _ in })
        }
    }

    static let residential = ["highway": "residential"]

    /// An 8 × 8 grid of two-way streets 100 m apart (64 junctions, above the node threshold); returns its rows of ids.
    static func grid(_ map: inout Map) -> [[Int64]] {
        let rows = (0..<8).map { row in
            (0..<8).map { column in map.node(east: Double(column) * 100, north: Double(row) * 100) }
        }
        for row in rows { map.way(row, residential) }
        for column in 0..<8 { map.way(rows.map { $0[column] }, residential) }
        return rows
    }

    static func decode(_ bytes: [UInt8]) throws -> RoadGraphFile.Contents {
        try bytes.withUnsafeBytes { buffer throws(RoadGraphFileError) in try RoadGraphFile.decode(buffer) }
    }

    static func router(_ network: RoadNetwork) -> RoadRouter {
        let graph = EdgeBasedGraph(network: network)
        return RoadRouter(
            network: network, graph: graph, hierarchy: ContractionHierarchy(graph: graph),
            snapper: EdgeSnapper(network: network))
    }

    @Test func aDistrictOneWaysCutOffIsKeptWhileACarParkAndALoneRoadThatLeadNowhereAreDropped() throws {
        var map = Map()
        let rows = Self.grid(&map)
        // A district round a 300 m × 300 m block (1.2 km of street) that a one-way street enters from the grid and
        // nothing leaves: its own strongly connected part, hanging off the grid. The signal on the one-way splits
        // it, so the way in passes a node that is a part of its own.
        let ring = [(0.0, 0.0), (150, 0), (300, 0), (300, 300), (150, 300), (0, 300)]
            .map { map.node(east: 1_200 + $0.0, north: $0.1) }
        map.way(ring + [ring[0]], Self.residential)
        let signal = map.node(east: 950, north: 0, tags: ["highway": "traffic_signals"])
        map.way([rows[0][7], signal, ring[0]], ["highway": "residential", "oneway": "yes"])
        // A car park's 100 m × 100 m loop of aisles joined to nothing.
        let park = [(0.0, 0.0), (100, 0), (100, 100), (0, 100)].map { map.node(east: $0.0, north: 2_000 + $0.1) }
        map.way(park + [park[0]], ["highway": "service", "service": "parking_aisle"])
        // A 1.5 km road joined to nothing (a piece an extract's edge cut off).
        let lone = [map.node(east: 3_000, north: 0), map.node(east: 3_000, north: 1_500)]
        map.way(lone, ["highway": "unclassified"])

        let built = try map.build()
        // Graph nodes are junctions, way ends and the middles that split closed loops.
        let kept = Set(built.network.nodeIDs)
        #expect(kept.contains(ring[0]) && kept.contains(ring[3]) && kept.contains(signal))
        #expect(kept.isDisjoint(with: park))
        #expect(kept.isDisjoint(with: lone))
        #expect(Set(rows.joined()).isSubset(of: kept))
        #expect(built.report.islandsRemoved == 2)

        // The district is routable into, not out of; a trip out of it falls back onto the grid.
        let router = Self.router(built.network)
        let into = try router.route(from: map.coordinate(rows[3][3]), to: map.coordinate(ring[3]))
        #expect(into.distanceMeters > 1_000)
    }

    @Test func aDestinationOnlyStreetIsNoShortCutButIsDrivenToReachAPlaceOnIt() throws {
        var map = Map()
        let rows = Self.grid(&map)
        // A 600 m street straight east of the grid's corner to B, for destination traffic only, and an open way
        // round to B, 1 km long.
        let start = rows[0][7]
        let middle = map.node(east: 1_000, north: 0)
        let end = map.node(east: 1_300, north: 0)
        map.way([start, middle, end], ["highway": "residential", "access": "destination"])
        let north = map.node(east: 700, north: 200), northEast = map.node(east: 1_300, north: 200)
        map.way([start, north, northEast, end], ["highway": "residential"])
        let built = try map.build()
        let network = built.network
        #expect(network.edgeIsDestinationOnly.filter { $0 }.count == 2)

        let router = Self.router(network)
        let through = try router.route(from: map.coordinate(rows[0][0]), to: map.coordinate(end))
        #expect(through.distanceMeters > 700 + 1_000 - 10)
        // Its time is the driven streets' alone: no trace of the weight that kept it off the short cut.
        #expect(through.durationSeconds < 600)

        let onIt = try router.route(from: map.coordinate(rows[0][0]), to: map.coordinate(middle))
        #expect(abs(onIt.distanceMeters - (700 + 300)) < 10)
        #expect(onIt.durationSeconds < 600)
        #expect(onIt.weight > EdgeBasedGraph.destinationEntryWeight)
        let table = try router.table(
            sources: [map.coordinate(rows[0][0])], destinations: [map.coordinate(middle), map.coordinate(end)])
        #expect(abs((table.durationSeconds(0, 0) ?? 0) - onIt.durationSeconds) < 0.2)
        #expect(abs((table.durationSeconds(0, 1) ?? 0) - through.durationSeconds) < 0.2)
    }

    @Test func aRoutesMainRoadClassIsTheOneItSpendsMostTimeOn() throws {
        var map = Map()
        let rows = Self.grid(&map)
        // 100 m of residential street off the grid's corner, then 2 km of primary road.
        let junction = map.node(east: 800, north: 0)
        let far = map.node(east: 2_800, north: 0)
        map.way([rows[0][7], junction], Self.residential)
        map.way([junction, far], ["highway": "primary"])
        let router = Self.router(try map.build().network)
        let long = try router.route(from: map.coordinate(rows[0][7]), to: map.coordinate(far))
        #expect(RoadClass(edgeRawValue: long.mainRoadClass) == .primary)
        let short = try router.route(from: map.coordinate(rows[0][0]), to: map.coordinate(rows[0][7]), detail: .summary)
        #expect(RoadClass(edgeRawValue: short.mainRoadClass) == .residential)
    }

    @Test func aRoundaboutIsOneStepWithTheExitToTakeThenAStepLeavingIt() throws {
        var map = Map()
        let rows = Self.grid(&map)
        // A roundabout of radius 30 m east of the grid, driven anticlockwise west → south → east → north, with
        // two-way arms out of each of its four nodes; the west arm joins the grid.
        let west = map.node(east: 970, north: 300), south = map.node(east: 1_000, north: 270)
        let east = map.node(east: 1_030, north: 300), north = map.node(east: 1_000, north: 330)
        map.way(
            [west, south, east, north, west], ["highway": "primary", "junction": "roundabout", "name": "Kiertotie"])
        map.way([rows[3][7], west], ["highway": "primary", "name": "Länsitie"])
        map.way([east, map.node(east: 1_300, north: 300)], ["highway": "primary", "name": "Itätie"])
        map.way([south, map.node(east: 1_000, north: 0)], ["highway": "primary", "name": "Etelätie"])
        map.way([north, map.node(east: 1_000, north: 600)], ["highway": "primary", "name": "Pohjoistie"])
        let network = try map.build().network
        #expect(network.edgeIsRoundabout.filter { $0 }.count == 4)
        let route = try Self.router(network).route(
            from: map.coordinate(rows[3][6]),
            to: RoadCoordinate(
                lat: 60 + 300 / Self.latMeters,
                lon: 24 + 1_200 / Self.lonMeters))
        let kinds = route.steps.map(\.type)
        // Along the grid's row onto Länsitie (a new name), then the roundabout as one step, never a turn on it.
        #expect(kinds == [.depart, .newName, .roundabout, .exitRoundabout, .arrive])
        #expect(!route.steps.contains { $0.name == "Kiertotie" })
        let round = try #require(route.steps.first { $0.type == .roundabout })
        // Past the south arm, out by the east one: the second exit, straight on, named by the way out.
        #expect(round.exit == 2)
        #expect(round.modifier == .straight)
        #expect(round.name == "Itätie")
        #expect(route.steps.first { $0.type == .exitRoundabout }?.exit == 2)
        let contents = try Self.decode(RoadGraphFile.encode(network))
        #expect(contents.network.edgeIsRoundabout == network.edgeIsRoundabout)
    }

    @Test func aGraphFileKeepsWhichEdgesAreDestinationOnly() throws {
        var map = Map()
        let rows = Self.grid(&map)
        map.way(
            [rows[7][7], map.node(east: 900, north: 700)], ["highway": "residential", "motor_vehicle": "customers"])
        let network = try map.build().network
        let contents = try Self.decode(RoadGraphFile.encode(network))
        #expect(contents.network.edgeIsDestinationOnly == network.edgeIsDestinationOnly)
        #expect(contents.network.edgeIsDestinationOnly.contains(true))
        var plain = Map()
        _ = Self.grid(&plain)
        let open = try Self.decode(RoadGraphFile.encode(try plain.build().network))
        #expect(open.network.edgeIsDestinationOnly == [Bool](repeating: false, count: open.network.edgeCount))
    }
}
