import Routing
import Testing
import TestSupport

/// Live speeds: new edge durations on the same network, the hierarchy re-contracted in its fixed node order, and
/// the answers checked against plain Dijkstra on the reweighted graph.
@Suite struct CustomizationTests {
    /// New durations for a seeded share of the edges: slowed up to tenfold or sped up to double.
    static func reweight(_ network: RoadNetwork, seed: UInt64) -> [Double] {
        var random = SeededGenerator(seed: seed)
        return network.edgeDurationSeconds.map { seconds in
            guard Double.random(in: 0..<1, using: &random) < 0.3 else { return seconds }
            return seconds * Double.random(in: 0.5...10, using: &random)
        }
    }

    @Test(arguments: [5, 6] as [UInt64])
    func aCustomizedHierarchyMatchesDijkstraOnTheReweightedGraph(seed: UInt64) async throws {
        // Seconds of contraction in a debug build: off the cooperative pool, so live-socket tests keep running.
        let (mismatches, reachable, changed, sameRank) = try await offThePool { Self.compare(seed: seed) }
        #expect(sameRank)
        #expect(mismatches.isEmpty, "first mismatches: \(mismatches.prefix(5))")
        #expect(reachable > 300)
        // The reweighting matters: the old hierarchy answers many of the pairs wrongly on the new weights.
        #expect(changed > 100)
    }

    /// Contracts a seeded grid, re-customises it for new weights, and compares 400 pairs with Dijkstra.
    static func compare(seed: UInt64) -> (mismatches: [String], reachable: Int, changed: Int, sameRank: Bool) {
        let network = RoadNetwork.randomGrid(rows: 24, columns: 24, seed: seed)
        let hierarchy = ContractionHierarchy(graph: EdgeBasedGraph(network: network))
        let durations = Self.reweight(network, seed: seed &+ 100)
        let graph = EdgeBasedGraph(network: network, edgeDurations: durations)
        let customized = hierarchy.customized(graph: graph)
        let query = CHQuery(hierarchy: customized), dijkstra = DijkstraRouter(graph: graph)
        let stale = CHQuery(hierarchy: hierarchy)
        var random = SeededGenerator(seed: seed &* 31)
        var mismatches: [String] = [], changed = 0, reachable = 0
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
            if stale.route(fromNode: from, toNode: to, in: graph)?.weight != expected?.weight { changed += 1 }
        }
        return (mismatches, reachable, changed, customized.rank == hierarchy.rank)
    }

    @Test func reweightingAGraphEqualsBuildingItWithTheNewDurations() {
        let network = RoadNetwork.randomGrid(rows: 12, columns: 12, seed: 9)
        let durations = Self.reweight(network, seed: 90)
        let built = EdgeBasedGraph(network: network, edgeDurations: durations)
        let reweighted = EdgeBasedGraph(network: network).reweighted(edgeDurations: durations)
        #expect(built.edgeWeight == reweighted.edgeWeight && built.arcWeight == reweighted.arcWeight)
        #expect(built.arcHead == reweighted.arcHead && built.firstArc == reweighted.firstArc)
        #expect(built.edgeWeight != EdgeBasedGraph(network: network).edgeWeight)
    }
}
