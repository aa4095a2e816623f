import Foundation
import Routing
import TestSupport

/// A seeded generator (SplitMix64), so every random graph is the same on every run.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

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

    /// A grid of `rows × columns` junctions about 100 m apart with random speeds, missing streets, one-ways and
    /// turn restrictions, and the standard turn costs.
    static func randomGrid(rows: Int, columns: Int, seed: UInt64) -> RoadNetwork {
        var random = SeededGenerator(seed: seed)
        var network = RoadNetwork(turnCosts: .standard)
        for row in 0..<rows {
            for column in 0..<columns {
                // Jitter the junctions so turn angles vary.
                let lat = 60.0 + Double(row) * 0.0009 + Double.random(in: -0.0002...0.0002, using: &random)
                let lon = 25.0 + Double(column) * 0.0018 + Double.random(in: -0.0004...0.0004, using: &random)
                let delay = Double.random(in: 0..<1, using: &random) < 0.1 ? 15.0 : 0
                network.addNode(id: Int64(row * columns + column), lat: lat, lon: lon, delaySeconds: delay)
            }
        }
        func node(_ row: Int, _ column: Int) -> Int32 { Int32(row * columns + column) }
        var pairs: [(Int32, Int32)] = []
        for row in 0..<rows {
            for column in 0..<columns {
                if column + 1 < columns { pairs.append((node(row, column), node(row, column + 1))) }
                if row + 1 < rows { pairs.append((node(row, column), node(row + 1, column))) }
                // A few diagonals make junctions of more than four ways.
                if row + 1 < rows, column + 1 < columns, Double.random(in: 0..<1, using: &random) < 0.1 {
                    pairs.append((node(row, column), node(row + 1, column + 1)))
                }
            }
        }
        for (a, b) in pairs {
            let dice = Double.random(in: 0..<1, using: &random)
            if dice < 0.08 { continue }
            let metres = RoadNetwork.greatCircle(network.coordinate(ofNode: a), network.coordinate(ofNode: b))
            let speed = [30.0, 40, 50, 60, 80].randomElement(using: &random)! / 3.6
            let seconds = metres / speed
            switch dice {
            case ..<0.18: network.addEdge(from: a, to: b, durationSeconds: seconds)
            case ..<0.28: network.addEdge(from: b, to: a, durationSeconds: seconds)
            default:
                network.addEdge(from: a, to: b, durationSeconds: seconds)
                network.addEdge(from: b, to: a, durationSeconds: seconds)
            }
        }
        // Restrictions at random junctions: a `no` on one turn or an `only` on one continuation.
        var arriving = [[Int32]](repeating: [], count: network.nodeCount)
        var leaving = [[Int32]](repeating: [], count: network.nodeCount)
        for edge in 0..<network.edgeCount {
            arriving[Int(network.edgeTo[edge])].append(Int32(edge))
            leaving[Int(network.edgeFrom[edge])].append(Int32(edge))
        }
        for via in 0..<network.nodeCount where Double.random(in: 0..<1, using: &random) < 0.3 {
            guard let from = arriving[via].randomElement(using: &random),
                  let to = leaving[via].randomElement(using: &random) else { continue }
            let kind: TurnRestriction.Kind = Bool.random(using: &random) ? .no : .only
            network.addRestriction(TurnRestriction(fromEdge: from, viaNode: Int32(via), toEdge: to, kind: kind))
        }
        return network
    }

    static func greatCircle(_ a: RoadCoordinate, _ b: RoadCoordinate) -> Double {
        let radians = Double.pi / 180
        let x = (b.lon - a.lon) * radians * cos((a.lat + b.lat) / 2 * radians)
        let y = (b.lat - a.lat) * radians
        return (x * x + y * y).squareRoot() * 6_371_008.8
    }
}
