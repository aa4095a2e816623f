import Foundation
import TestSupport
import Testing
@testable import RoadBuilder
@testable import Routing

/// The network, turn graph, hierarchy and snapping index of a shipped extract, built once per test run off the
/// cooperative pool (TestSupport's `SharedFixture`).
enum RoutingParts {
    typealias Parts = (
        network: RoadNetwork, graph: EdgeBasedGraph, hierarchy: ContractionHierarchy, snapper: EdgeSnapper
    )

    /// The parts of one file, handed from the thread that built them to the tests that read them.
    final class Built: @unchecked Sendable {
        let parts: Parts
        init(_ parts: Parts) { self.parts = parts }
    }

    static let cache = SharedFixture<String, Built> { file in
        let network = try Extracts.build(file).network
        let graph = EdgeBasedGraph(network: network)
        return Built((network, graph, ContractionHierarchy(graph: graph), EdgeSnapper(network: network)))
    }

    /// The cached parts of `file`.
    static func parts(_ file: String) async throws -> Parts { try await cache.value(file).parts }

    /// A fresh router (routers are not thread-safe) over the cached parts of `file`.
    static func router(_ file: String) async throws -> RoadRouter {
        let parts = try await parts(file)
        return RoadRouter(
            network: parts.network, graph: parts.graph, hierarchy: parts.hierarchy, snapper: parts.snapper)
    }
}

/// Snapping and routes between coordinates on the shipped Helsinki and Kotka extracts.
@Suite struct RouterOnExtractsTests {
    static let files = ["Helsinki-clean.osm.pbf", "kotka-clean.osm.pbf"]

    /// A point `meters` to the right (positive) or left of the middle of `edge`'s longest segment, with that
    /// segment's bearing and its middle.
    static func offsetPoint(
        network: RoadNetwork, edge: Int32, meters: Double
    ) -> (point: RoadCoordinate, middle: RoadCoordinate, bearing: Double) {
        let points = network.geometry(ofEdge: edge)
        let longest = zip(points, points.dropFirst()).max {
            RoadNetwork.distance($0.0, $0.1) < RoadNetwork.distance($1.0, $1.1)
        }!
        let middle = RoadCoordinate(lat: (longest.0.lat + longest.1.lat) / 2, lon: (longest.0.lon + longest.1.lon) / 2)
        let bearing = RoadNetwork.bearing(longest.0.lat, longest.0.lon, longest.1.lat, longest.1.lon)
        return (destination(from: middle, bearing: bearing + 90, meters: meters), middle, bearing)
    }

    /// The point `meters` from `start` along `bearing` (flat-earth, fine for tens of metres).
    static func destination(from start: RoadCoordinate, bearing: Double, meters: Double) -> RoadCoordinate {
        let radians = bearing * Double.pi / 180, metersPerDegree = 6_371_008.8 * Double.pi / 180
        return RoadCoordinate(
            lat: start.lat + meters * cos(radians) / metersPerDegree,
            lon: start.lon + meters * sin(radians) / (metersPerDegree * cos(start.lat * Double.pi / 180)))
    }

    static func longestSegmentLength(_ network: RoadNetwork, _ edge: Int32) -> Double {
        let points = network.geometry(ofEdge: edge)
        return zip(points, points.dropFirst()).map { RoadNetwork.distance($0.0, $0.1) }.max() ?? 0
    }

    // MARK: - Snapping

    @Test(arguments: files)
    func aPointTenMetresOffAStreetSnapsBackOntoItOrOntoARoadNearerStill(file: String) async throws {
        let router = try await RoutingParts.router(file), network = router.network
        var checked = 0, onOwnStreet = 0
        for edge in 0..<Int32(network.edgeCount) where Self.longestSegmentLength(network, edge) >= 40 {
            let (point, middle, _) = Self.offsetPoint(network: network, edge: edge, meters: 10)
            let snap = try #require(router.snapper.snap(point))
            checked += 1
            #expect(snap.distanceMeters <= 10.05)
            if snap.edge == edge || snap.edge == router.snapper.reverse(of: edge) {
                onOwnStreet += 1
                #expect(RoadNetwork.distance(snap.coordinate, middle) < 0.5)
                #expect(abs(snap.distanceMeters - 10) < 0.1)
            }
        }
        print(
            "\(file): \(onOwnStreet) of \(checked) points 10 m off a segment of 40 m or more snapped back onto "
                + "their street"
        )
        #expect(checked > 50)
        #expect(onOwnStreet * 10 >= checked * 8)
    }

    @Test func aPointTenMetresOffMannerheimintieSnapsOntoMannerheimintie() async throws {
        let router = try await RoutingParts.router("Helsinki-clean.osm.pbf"), network = router.network
        let edge = try #require(
            (0..<Int32(network.edgeCount)).filter { network.name(ofEdge: $0) == "Mannerheimintie" }
                .max { Self.longestSegmentLength(network, $0) < Self.longestSegmentLength(network, $1) })
        for side in [10.0, -10.0] {
            let (point, _, _) = Self.offsetPoint(network: network, edge: edge, meters: side)
            let snap = try #require(router.snapper.snap(point))
            #expect(network.name(ofEdge: snap.edge) == "Mannerheimintie")
            #expect(abs(snap.distanceMeters - 10) < 0.5)
        }
    }

    @Test func aHeadingPicksTheDirectionOfATwoWayStreet() async throws {
        let router = try await RoutingParts.router("Helsinki-clean.osm.pbf"), network = router.network,
            snapper = router.snapper
        let twoWay = (0..<Int32(network.edgeCount)).filter {
            snapper.reverse(of: $0) != nil && Self.longestSegmentLength(network, $0) >= 40
        }
        #expect(twoWay.count > 20)
        for edge in twoWay {
            let reverse = try #require(snapper.reverse(of: edge))
            let (point, _, bearing) = Self.offsetPoint(network: network, edge: edge, meters: 4)
            let along = try #require(snapper.snap(point, heading: bearing))
            let against = try #require(snapper.snap(point, heading: bearing + 180))
            // Some other road may be nearer than 4 m; where this street wins, the heading decides its direction.
            guard [edge, reverse].contains(along.edge) else { continue }
            #expect(along.edge == edge)
            #expect(against.edge == reverse)
            #expect(EdgeSnapper.angleBetween(along.bearing, bearing) < 1)
            #expect(abs(along.fraction + against.fraction - 1) < 1e-6)
            // Ten degrees off is still this direction; without a heading the nearest (lower index on a tie) wins.
            #expect(snapper.snap(point, heading: bearing + 40)?.edge == edge)
            if let nearest = snapper.snap(point)?.edge, [edge, reverse].contains(nearest) {
                #expect(nearest == min(edge, reverse))
            }
        }
    }

    @Test func aPointFarFromAnyRoadDoesNotSnap() async throws {
        let router = try await RoutingParts.router("Helsinki-clean.osm.pbf")
        #expect(router.snapper.snap(RoadCoordinate(lat: 60.30, lon: 25.20)) == nil)
        let edge = Int32(0)
        let (point, _, _) = Self.offsetPoint(network: router.network, edge: edge, meters: 10)
        #expect(router.snapper.snap(point, maxDistance: 5).map { $0.distanceMeters <= 5 } ?? true)
        #expect(throws: RouteError.noSegment(index: 1)) {
            try router.route(from: point, to: RoadCoordinate(lat: 60.30, lon: 25.20))
        }
    }

    /// The nearest-only search (what a route snaps with) keeps exactly the edges the full candidate list has within
    /// the slack of its nearest, on seeded points all over each extract, with and without a filter on edges.
    @Test(arguments: files)
    func theNearestCandidatesAreTheFullListsNearestOnes(file: String) async throws {
        let snapper = try await RoutingParts.parts(file).snapper
        let network = try await RoutingParts.parts(file).network
        var random = SeededGenerator(seed: 12)
        let lats = network.geometryLats, lons = network.geometryLons
        var compared = 0
        for _ in 0..<1_000 {
            let index = Int.random(in: 0..<lats.count, using: &random)
            let point = RoadCoordinate(
                lat: lats[index] + Double.random(in: -0.0008...0.0008, using: &random),
                lon: lons[index] + Double.random(in: -0.0015...0.0015, using: &random))
            for (slack, odd) in [(0.5, false), (20.0, false), (0.5, true)] {
                let include: (Int32) -> Bool = { !odd || $0 % 2 == 1 }
                let full = snapper.candidates(near: point).filter { include($0.edge) }
                let expected =
                    full.first.map { nearest in full.filter { $0.distanceMeters <= nearest.distanceMeters + slack } }
                    ?? []
                let found = snapper.nearestCandidates(near: point, slack: slack, where: include)
                #expect(found == expected, "\(point) slack \(slack)")
                compared += expected.count
            }
        }
        #expect(compared > 1_000, "most points lie near a road")
    }

    // MARK: - Routes

    @Test(arguments: files)
    func aRoutesDistanceAndDurationAreItsStepsAndItsGeometrysLength(file: String) async throws {
        let router = try await RoutingParts.router(file), network = router.network
        var generator = SeededGenerator(seed: 12)
        var routed = 0
        for _ in 0..<150 {
            let a = network.coordinate(ofNode: Int32.random(in: 0..<Int32(network.nodeCount), using: &generator))
            let b = network.coordinate(ofNode: Int32.random(in: 0..<Int32(network.nodeCount), using: &generator))
            let from = RoadCoordinate(
                lat: a.lat + Double.random(in: -0.0002...0.0002, using: &generator), lon: a.lon + 0.0001)
            let to = RoadCoordinate(
                lat: b.lat + 0.0001, lon: b.lon + Double.random(in: -0.0003...0.0003, using: &generator))
            guard let route = try? router.route(from: from, to: to) else { continue }
            routed += 1
            let stepMeters = route.steps.reduce(0) { $0 + $1.distanceMeters }
            let stepSeconds = route.steps.reduce(0) { $0 + $1.durationSeconds }
            #expect(abs(route.distanceMeters - stepMeters) <= 1)
            #expect(abs(route.distanceMeters - RoadNetwork.length(of: route.geometry)) <= 1)
            #expect(abs(route.durationSeconds - stepSeconds) < 0.001)
            #expect(route.steps.first?.type == .depart && route.steps.last?.type == .arrive)
            #expect(
                route.steps.dropFirst().dropLast().allSatisfy {
                    $0.type != .depart && $0.type != .arrive && $0.modifier != nil
                })
            #expect(route.geometry.first == route.start.coordinate && route.geometry.last == route.end.coordinate)
            #expect(route.durationSeconds >= 0)
            // The route's weight is the table's for the same pair.
            let table = try router.table(sources: [from], destinations: [to])
            #expect(table.weight(0, 0) == route.weight)
        }
        #expect(routed > 100)
    }

    @Test(arguments: files)
    func aRoutesWeightFromPartWayAlongEdgesIsDijkstrasWithTheSameOffsets(file: String) async throws {
        let router = try await RoutingParts.router(file), network = router.network, graph = router.graph
        let dijkstra = DijkstraRouter(graph: graph)
        var generator = SeededGenerator(seed: 99)
        func offset(_ snap: EdgeSnap) -> Int32 {
            Int32((snap.fraction * Double(graph.edgeWeight[Int(snap.edge)])).rounded())
        }
        var compared = 0
        for _ in 0..<200 {
            let a = network.coordinate(ofNode: Int32.random(in: 0..<Int32(network.nodeCount), using: &generator))
            let b = network.coordinate(ofNode: Int32.random(in: 0..<Int32(network.nodeCount), using: &generator))
            let from = RoadCoordinate(lat: a.lat + 0.0001, lon: a.lon),
                to = RoadCoordinate(lat: b.lat, lon: b.lon + 0.0002)
            let starts = try router.endpoints(from), ends = try router.endpoints(to)
            guard Set(starts.map(\.edge)).isDisjoint(with: ends.map(\.edge)) else { continue }
            let reference = dijkstra.route(
                from: starts.map {
                    RouteEndpoint(edge: $0.edge, weightOffset: -offset($0), lengthOffset: -$0.metersAlongEdge)
                },
                to: ends.map {
                    RouteEndpoint(edge: $0.edge, weightOffset: offset($0), lengthOffset: $0.metersAlongEdge)
                })
            let routed = try? router.route(from: from, to: to)
            if let reference {
                #expect(routed?.weight == reference.weight)
            } else if let routed {
                // The nearest roads do not connect: a route exists only by the fallback to the main component's roads.
                #expect(!starts.contains(routed.start) || !ends.contains(routed.end))
            }
            compared += 1
        }
        #expect(compared > 150)
    }

    @Test func aRouteAcrossCentralHelsinkiIsPlausiblyLongAndDepartsAndArrives() async throws {
        let router = try await RoutingParts.router("Helsinki-clean.osm.pbf")
        // Mannerheimintie by the main post office to Pohjoisesplanadi by the Market Square, about 920 m apart.
        let from = RoadCoordinate(lat: 60.17108, lon: 24.93614), to = RoadCoordinate(lat: 60.16789, lon: 24.95162)
        let route = try router.route(from: from, to: to)
        let straight = RoadNetwork.distance(from, to)
        print(
            "Mannerheimintie to Pohjoisesplanadi: \(Int(route.distanceMeters)) m, \(route.durationSeconds) s, straight "
                + "\(Int(straight)) m; "
                + route.steps.map {
                    "\($0.type.rawValue) \($0.modifier?.rawValue ?? "-") \($0.name) \(Int($0.distanceMeters)) m"
                }.joined(separator: "; "))
        #expect(route.distanceMeters >= straight && route.distanceMeters <= 1.6 * straight)
        #expect(route.start.distanceMeters < 30 && route.end.distanceMeters < 30)
        #expect(route.steps.first?.type == .depart && route.steps.last?.type == .arrive)
        #expect(route.steps.count >= 3)
        #expect(route.steps.first?.name == "Mannerheimintie" && route.steps.last?.name == "Pohjoisesplanadi")
        #expect(route.durationSeconds > route.distanceMeters / 20 && route.durationSeconds < route.distanceMeters / 2)
    }

    @Test func aRouteAlongOneEdgeDrivesOnlyThePartBetweenTheEnds() async throws {
        let router = try await RoutingParts.router("Helsinki-clean.osm.pbf"), network = router.network
        let edge = try #require(
            (0..<Int32(network.edgeCount)).first {
                router.snapper.reverse(of: $0) != nil && network.edgeLengthMeters[Int($0)] > 150
            })
        let length = network.edgeLengthMeters[Int(edge)], seconds = network.edgeDurationSeconds[Int(edge)]
        let start = try #require(network.slice(ofEdge: edge, from: 0, to: 0.2).last)
        let end = try #require(network.slice(ofEdge: edge, from: 0, to: 0.7).last)
        let ahead = try router.route(from: start, to: end)
        #expect(ahead.edges == [edge])
        #expect(abs(ahead.distanceMeters - 0.5 * length) < 1)
        #expect(abs(ahead.durationSeconds - 0.5 * seconds) < 0.2)
        #expect(ahead.steps.map(\.type) == [.depart, .arrive])
        // Behind the start on a two-way street: the other direction's edge, the same stretch.
        let back = try router.route(from: end, to: start)
        #expect(back.edges == [router.snapper.reverse(of: edge)])
        #expect(abs(back.distanceMeters - 0.5 * length) < 1)
    }

    @Test func anEndBehindTheStartOnAOneWayEdgeDrivesRoundTheBlock() async throws {
        let router = try await RoutingParts.router("Helsinki-clean.osm.pbf"), network = router.network
        let edge = try #require(
            (0..<Int32(network.edgeCount)).first {
                router.snapper.reverse(of: $0) == nil && network.edgeLengthMeters[Int($0)] > 80
                    && Self.longestSegmentLength(network, $0) > 40
            })
        let length = network.edgeLengthMeters[Int(edge)]
        let start = try #require(network.slice(ofEdge: edge, from: 0, to: 0.7).last)
        let end = try #require(network.slice(ofEdge: edge, from: 0, to: 0.3).last)
        let route = try router.route(from: start, to: end)
        #expect(route.start.edge == edge && route.end.edge == edge)
        #expect(route.edges.first == edge && route.edges.last == edge && route.edges.count > 1)
        #expect(route.distanceMeters > 0.6 * length)
        let stepMeters = route.steps.reduce(0) { $0 + $1.distanceMeters }
        #expect(abs(route.distanceMeters - stepMeters) <= 1)
        #expect(abs(route.durationSeconds - route.steps.reduce(0) { $0 + $1.durationSeconds }) < 0.001)
        // The table agrees, though its buckets alone would have paired the end behind the start.
        #expect(try router.table(sources: [start], destinations: [end]).weight(0, 0) == route.weight)
    }

    @Test(arguments: files)
    func aTableEqualsThePairwiseRoutes(file: String) async throws {
        let router = try await RoutingParts.router(file), network = router.network
        var generator = SeededGenerator(seed: 7)
        let points = (0..<6).map { _ in
            let node = network.coordinate(ofNode: Int32.random(in: 0..<Int32(network.nodeCount), using: &generator))
            return RoadCoordinate(lat: node.lat + 0.00005, lon: node.lon - 0.00005)
        }
        let sources = Array(points[0..<4]), destinations = Array(points[2..<6])
        let table = try router.table(sources: sources, destinations: destinations)
        for (row, from) in sources.enumerated() {
            for (column, to) in destinations.enumerated() {
                let route = try? router.route(from: from, to: to)
                #expect(table.weight(row, column) == route?.weight)
                if let route, let meters = table.distanceMeters(row, column) {
                    #expect(abs(meters - route.distanceMeters) < 1)
                    #expect(table.durationSeconds(row, column) == route.durationSeconds)
                }
            }
        }
        // The same coordinate as source and destination costs nothing.
        #expect(table.weight(2, 0) == 0 && table.weight(3, 1) == 0)
    }

    /// A route from part-way along an edge starts its search below zero; the query's stopping rule must still
    /// find the fastest route (it once stopped early on 2 of these 1,500 Kotka pairs, which the table answered right).
    @Test func routesFromPartWayAlongEdgesAgreeWithTheTableOnManyPairs() async throws {
        let built = try await RoutingParts.cache.value("kotka-clean.osm.pbf")
        let mismatches = try await offThePool { () -> [String] in
            let parts = built.parts
            let router = RoadRouter(
                network: parts.network, graph: parts.graph, hierarchy: parts.hierarchy, snapper: parts.snapper)
            let network = parts.network
            var generator = SeededGenerator(seed: 777)
            var found: [String] = []
            for _ in 0..<1500 {
                let a = network.coordinate(ofNode: Int32.random(in: 0..<Int32(network.nodeCount), using: &generator))
                let b = network.coordinate(ofNode: Int32.random(in: 0..<Int32(network.nodeCount), using: &generator))
                let from = RoadCoordinate(
                    lat: a.lat + Double.random(in: -0.0002...0.0002, using: &generator), lon: a.lon + 0.0001)
                let to = RoadCoordinate(
                    lat: b.lat + 0.0001, lon: b.lon + Double.random(in: -0.0003...0.0003, using: &generator))
                guard let route = try? router.route(from: from, to: to) else { continue }
                let table = try router.table(sources: [from], destinations: [to])
                if table.weight(0, 0) != route.weight {
                    found.append(
                        "\(from) → \(to): route \(route.weight), table \(String(describing: table.weight(0, 0)))")
                }
            }
            return found
        }
        #expect(mismatches.isEmpty, "\(mismatches)")
    }
}
