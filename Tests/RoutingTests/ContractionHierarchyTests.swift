import Routing
import Testing
import TestSupport

/// The hierarchy's answers against plain Dijkstra on the same edge-based graph, on seeded random grids.
@Suite struct ContractionHierarchyTests {
    @Test(arguments: [1, 2, 3, 4] as [UInt64])
    func hierarchyWeightsEqualDijkstraOnRandomGrids(seed: UInt64) async throws {
        let routers = try await Routers.built { .randomGrid(rows: 11, columns: 13, seed: seed) }
        // Both engines answer 250 pairs off the cooperative pool; the answers are checked here.
        let answers = try await offThePool { () -> [(from: Int32, to: Int32, expected: RoadPath?, actual: RoadPath?)] in
            var random = SeededGenerator(seed: seed &* 7919)
            return (0..<250).map { _ in
                let from = Int32.random(in: 0..<Int32(routers.network.nodeCount), using: &random)
                let to = Int32.random(in: 0..<Int32(routers.network.nodeCount), using: &random)
                return (from, to, routers.dijkstra.route(fromNode: from, toNode: to), routers.route(from, to))
            }
        }
        var mismatches = 0, unreachable = 0
        for (from, to, expected, actual) in answers {
            if expected?.weight != actual?.weight { mismatches += 1 }
            if let actual { try expectDrivable(actual, from: from, to: to, in: routers) } else { unreachable += 1 }
        }
        #expect(mismatches == 0)
        // The grids are connected enough that most pairs have a route, and restrictive enough that not all do.
        #expect(unreachable < 125)
    }

    /// A mid-sized grid (about 3,000 directed edges, a dense core late in the contraction) under the default
    /// bounds and under bounds so tight that almost no witness is found: the hierarchy stays exact either way,
    /// since a missed witness only adds a shortcut.
    @Test(arguments: [
        ContractionHierarchy.Options(),
        ContractionHierarchy.Options(
            witnessSettleLimit: 1, witnessHopLimit: 1, estimateSettleLimit: 1, estimateHopLimit: 1,
            maxStaleness: 1_000),
    ])
    func aMidSizedGridStaysExactUnderAnyWitnessBounds(options: ContractionHierarchy.Options) throws {
        let network = RoadNetwork.randomGrid(rows: 30, columns: 30, seed: 17)
        let graph = EdgeBasedGraph(network: network)
        let hierarchy = ContractionHierarchy(graph: graph, options: options)
        let query = CHQuery(hierarchy: hierarchy), dijkstra = DijkstraRouter(graph: graph)
        #expect(Set(hierarchy.rank).count == graph.nodeCount)
        var random = SeededGenerator(seed: 1717)
        var mismatches: [String] = [], reachable = 0
        for _ in 0..<400 {
            let from = Int32.random(in: 0..<Int32(network.nodeCount), using: &random)
            let to = Int32.random(in: 0..<Int32(network.nodeCount), using: &random)
            let expected = dijkstra.route(fromNode: from, toNode: to)
            let actual = query.route(fromNode: from, toNode: to, in: graph)
            if expected?.weight != actual?.weight {
                mismatches.append(
                    "\(from) → \(to): Dijkstra \(String(describing: expected?.weight)), CH "
                        + "\(String(describing: actual?.weight))"
                )
            }
            if expected != nil { reachable += 1 }
        }
        #expect(mismatches.count == 0, "first mismatches: \(mismatches.prefix(5))")
        #expect(reachable > 300)
    }

    /// A path starts at `from`, ends at `to`, takes only allowed turns, and its weight and length add up.
    private func expectDrivable(_ path: RoadPath, from: Int32, to: Int32, in routers: Routers) throws {
        let graph = routers.graph, network = routers.network
        let first = try #require(path.edges.first), last = try #require(path.edges.last)
        #expect(network.edgeFrom[Int(first)] == from)
        #expect(network.edgeTo[Int(last)] == to)
        var weight = Int(graph.edgeWeight[Int(last)]), meters = Double(graph.edgeLength[Int(last)])
        for (tail, head) in zip(path.edges, path.edges.dropFirst()) {
            let arcs = Int(graph.firstArc[Int(tail)])..<Int(graph.firstArc[Int(tail) + 1])
            let arc = try #require(arcs.first { graph.arcHead[$0] == head }, "no turn \(tail) → \(head)")
            weight += Int(graph.arcWeight[arc])
            meters += Double(graph.arcLength[arc])
        }
        #expect(weight == path.weight)
        #expect(abs(meters - path.distanceMeters) < 0.01)
    }

    @Test func theHierarchyAddsShortcutsAndKeepsEveryNodeRanked() async throws {
        let routers = try await Routers.built { .randomGrid(rows: 8, columns: 8, seed: 9) }
        #expect(routers.hierarchy.shortcutCount > 0)
        #expect(Set(routers.hierarchy.rank).count == routers.graph.nodeCount)
    }

    @Test func aTableEqualsThePairwiseQueries() async throws {
        let routers = try await Routers.built { .randomGrid(rows: 10, columns: 10, seed: 5) }
        var random = SeededGenerator(seed: 55)
        let count = Int32(routers.network.nodeCount)
        let sources = (0..<20).map { _ in Int32.random(in: 0..<count, using: &random) }
        let targets = (0..<25).map { _ in Int32.random(in: 0..<count, using: &random) }
        let table = routers.table.table(
            sources: sources.map { routers.graph.sources(atNode: $0) },
            targets: targets.map { routers.graph.targets(atNode: $0) })
        var reachable = 0
        for (row, source) in sources.enumerated() {
            for (column, target) in targets.enumerated() {
                let pairwise = routers.route(source, target)
                #expect(table.weight(row, column) == pairwise?.weight)
                if let pairwise, let meters = table.distanceMeters(row, column) {
                    reachable += 1
                    #expect(abs(meters - pairwise.distanceMeters) < 0.01, "\(source) → \(target)")
                }
            }
        }
        #expect(reachable > 250)
    }
}
