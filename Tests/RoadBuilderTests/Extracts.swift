import Foundation
@testable import RoadBuilder
import Routing
import TestSupport

/// The OSM extracts shipped in `data/osm/`, each built once per test run.
enum Extracts {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The path of `data/osm/<name>`.
    static func path(_ name: String) -> String {
        root.appendingPathComponent("data/osm").appendingPathComponent(name).path
    }

    /// Builds `data/osm/<name>` with the standard profile and the default island threshold.
    static func build(
        _ name: String, minimumComponentSize: Int = RoadNetworkBuilder.defaultMinimumComponentSize
    ) throws -> RoadNetworkBuilder.Built {
        try RoadNetworkBuilder.build(
            reader: .init(path: path(name)), profile: .standard,
            minimumComponentSize: minimumComponentSize,
            now: { ContinuousClock.now }, progress: { _ in })
    }

    /// Each shipped file built once for the whole run, off the cooperative pool.
    static let cache = SharedFixture<String, RoadNetworkBuilder.Built> { name in try build(name) }

    /// The cached build of one of the shipped files the tests use.
    static func built(_ name: String) async throws -> RoadNetworkBuilder.Built { try await cache.value(name) }
}

extension RoadNetworkBuilder.Built {
    /// Junctions counted the way OSMnx's strict simplification does: nodes with other than two distinct
    /// neighbours, plus nodes where edges of different OSM ways meet; and the directed edges between them.
    var strictCollapsedCounts: (junctions: Int, edges: Int) {
        var neighbours = [Set<Int32>](repeating: [], count: network.nodeCount)
        var ways = [Set<Int64>](repeating: [], count: network.nodeCount)
        for edge in 0..<network.edgeCount {
            let from = Int(network.edgeFrom[edge]), to = Int(network.edgeTo[edge])
            neighbours[from].insert(Int32(to)); neighbours[to].insert(Int32(from))
            ways[from].insert(edgeWayIDs[edge]); ways[to].insert(edgeWayIDs[edge])
        }
        let isJunction = network.nodeIDs.indices.map { neighbours[$0].count != 2 || ways[$0].count > 1 }
        let edges = (0..<network.edgeCount).filter { isJunction[Int(network.edgeFrom[$0])] }.count
        return (isJunction.filter { $0 }.count, edges)
    }
}

extension RoadNetwork {
    /// Junctions once chains of degree-2 nodes are collapsed (nodes with other than two distinct neighbours), and
    /// the directed edges between them: docs/roads.md's way of counting.
    var collapsedCounts: (junctions: Int, edges: Int) {
        var neighbours = [Set<Int32>](repeating: [], count: nodeCount)
        for edge in 0..<edgeCount {
            neighbours[Int(edgeFrom[edge])].insert(edgeTo[edge])
            neighbours[Int(edgeTo[edge])].insert(edgeFrom[edge])
        }
        let isJunction = neighbours.map { $0.count != 2 }
        let junctions = isJunction.filter { $0 }.count
        // Each directed edge leaving a junction starts one collapsed directed edge.
        let collapsed = (0..<edgeCount).filter { isJunction[Int(edgeFrom[$0])] }.count
        return (junctions, collapsed)
    }
}
