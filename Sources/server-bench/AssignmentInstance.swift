import Foundation
import EnRouteDomain

/// A random sparse assignment instance: requests (rows), each with its candidate providers (columns) and the road
/// seconds each would take to reach the pickup, in whole seconds from 30 to 1,800.
struct AssignmentInstance {
    /// How requests and providers are placed.
    enum Layout: String, CaseIterable {
        /// Each request's candidates are distinct providers drawn uniformly, at costs drawn uniformly.
        case uniform
        /// Providers spread over a 20 km square, half the requests spread too and half crowded downtown (a normal
        /// of 1.5 km around the centre); each request's candidates are its nearest providers, at the straight line
        /// times a detour of 1.2–1.6 at 30 km/h plus 30 s. Downtown requests share their candidates, so some go
        /// unserved and the solver's augmenting paths grow long.
        case city
    }

    let columns: Int
    let candidates: [[AssignmentCandidate]]

    init(rows: Int, columns: Int, candidates k: Int, layout: Layout, using rng: inout SplitMix64) {
        self.columns = columns
        let k = min(k, columns)
        switch layout {
        case .uniform: candidates = Self.uniform(rows: rows, columns: columns, k: k, using: &rng)
        case .city: candidates = Self.city(rows: rows, columns: columns, k: k, using: &rng)
        }
    }

    /// The instance as text: `rows columns`, then one line a row of `column cost` pairs (bench/assignment.py reads it).
    var text: String {
        var lines = ["\(candidates.count) \(columns)"]
        for row in candidates {
            lines.append(row.map { "\($0.column) \(Int($0.cost))" }.joined(separator: " "))
        }
        return lines.joined(separator: "\n") + "\n"
    }

    private static func seconds(_ value: Double) -> Double { min(1_800, max(30, value.rounded())) }

    private static func uniform(
        rows: Int, columns: Int, k: Int, using rng: inout SplitMix64
    )
        -> [[AssignmentCandidate]]
    {
        (0..<rows).map { _ in
            var chosen: Set<Int> = []
            while chosen.count < k { chosen.insert(Int.random(in: 0..<columns, using: &rng)) }
            return chosen.sorted().map {
                AssignmentCandidate(column: $0, cost: Double(Int.random(in: 30...1_800, using: &rng)))
            }
        }
    }

    private static func city(
        rows: Int, columns: Int, k: Int, using rng: inout SplitMix64
    )
        -> [[AssignmentCandidate]]
    {
        let side = 20_000.0
        func spread() -> (x: Double, y: Double) {
            (Double.random(in: 0..<side, using: &rng), Double.random(in: 0..<side, using: &rng))
        }
        // Box-Muller: two uniform draws give a normal one per axis.
        func downtown() -> (x: Double, y: Double) {
            let r = (-2 * log(Double.random(in: Double.ulpOfOne..<1, using: &rng))).squareRoot() * 1_500
            let a = Double.random(in: 0..<(2 * .pi), using: &rng)
            return (min(side, max(0, side / 2 + r * cos(a))), min(side, max(0, side / 2 + r * sin(a))))
        }
        let providers = (0..<columns).map { _ in spread() }
        let requests = (0..<rows).map { row in row.isMultiple(of: 2) ? spread() : downtown() }
        return requests.map { request in
            // The k nearest providers, kept sorted by squared distance.
            var nearest: [(column: Int, d2: Double)] = []
            nearest.reserveCapacity(k + 1)
            for (column, p) in providers.enumerated() {
                let dx = p.x - request.x, dy = p.y - request.y
                let d2 = dx * dx + dy * dy
                guard nearest.count < k || d2 < nearest[nearest.count - 1].d2 else { continue }
                nearest.insert((column, d2), at: nearest.firstIndex { $0.d2 > d2 } ?? nearest.count)
                if nearest.count > k { nearest.removeLast() }
            }
            return nearest.map { pair in
                let detour = Double.random(in: 1.2..<1.6, using: &rng)
                return AssignmentCandidate(
                    column: pair.column, cost: seconds(pair.d2.squareRoot() * detour / 8.33 + 30))
            }
        }
    }
}
