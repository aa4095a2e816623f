/// A seeded generator (SplitMix64): the same seed gives the same numbers on every run and platform, for
/// synthetic networks in tests and benchmarks.
public struct SeededGenerator: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// A generator whose sequence is fixed by `seed`.
    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

extension RoadNetwork {
    /// A grid of `rows × columns` junctions about 100 m apart with random speeds, missing streets, one-ways and
    /// turn restrictions, and the standard turn costs.
    public static func randomGrid(rows: Int, columns: Int, seed: UInt64) -> RoadNetwork {
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
            let metres = RoadNetwork.distance(network.coordinate(ofNode: a), network.coordinate(ofNode: b))
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
                let to = leaving[via].randomElement(using: &random)
            else { continue }
            let kind: TurnRestriction.Kind = Bool.random(using: &random) ? .no : .only
            network.addRestriction(TurnRestriction(fromEdge: from, viaNode: Int32(via), toEdge: to, kind: kind))
        }
        return network
    }
}
