import Foundation
import Routing
import TestSupport

/// The three engines over one network: the turn graph, its contraction hierarchy's query and table, and Dijkstra.
/// Made on a Dispatch thread by `built(_:)` and handed to one test at a time, hence `@unchecked Sendable`.
struct Routers: @unchecked Sendable {
    let network: RoadNetwork
    let graph: EdgeBasedGraph
    let hierarchy: ContractionHierarchy
    let query: CHQuery
    let table: CHTable
    let dijkstra: DijkstraRouter

    init(_ network: RoadNetwork) {
        self.network = network
        graph = EdgeBasedGraph(network: network)
        hierarchy = ContractionHierarchy(graph: graph)
        query = CHQuery(hierarchy: hierarchy)
        table = CHTable(hierarchy: hierarchy)
        dijkstra = DijkstraRouter(graph: graph)
    }

    /// The engines over `network`, contracted off the cooperative pool so that other tests keep running meanwhile.
    static func built(_ network: @escaping @Sendable () -> RoadNetwork) async throws -> Routers {
        try await offThePool { Routers(network()) }
    }

    /// The route between two nodes by the hierarchy.
    func route(_ from: Int32, _ to: Int32) -> RoadPath? {
        query.route(fromNode: from, toNode: to, in: graph)
    }

    /// The network nodes a path passes, first to last.
    func nodes(of path: RoadPath) -> [Int32] {
        guard let first = path.edges.first else { return [] }
        return [network.edgeFrom[Int(first)]] + path.edges.map { network.edgeTo[Int($0)] }
    }
}

extension RoadNetwork {
    /// Adds one edge `from → to` (and `to → from` unless one-way) taking `seconds`, and returns the forward edge.
    @discardableResult
    mutating func road(_ from: Int32, _ to: Int32, seconds: Double, oneWay: Bool = false, name: String = "") -> Int32 {
        let forward = addEdge(from: from, to: to, durationSeconds: seconds, name: name)
        if !oneWay { addEdge(from: to, to: from, durationSeconds: seconds, name: name) }
        return forward
    }

    /// The edge `from → to`.
    func edge(_ from: Int32, _ to: Int32) -> Int32 {
        Int32((0..<edgeCount).first { edgeFrom[$0] == from && edgeTo[$0] == to }!)
    }
}
