import Testing
import EnRouteDomain
import TestSupport

@Suite struct AssignmentTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let columns: Int
        let pairs: [[(Int, Double)]]
        let expected: [Int?]
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(
            name: "one request takes its cheapest provider", columns: 3, pairs: [[(0, 9), (1, 4), (2, 7)]],
            expected: [1]),
        Case(
            name: "the nearest provider goes to the request that loses most without them", columns: 2,
            pairs: [[(0, 1), (1, 2)], [(0, 1), (1, 10)]], expected: [1, 0]),
        Case(
            name: "more requests than providers: the cheapest set is served", columns: 1,
            pairs: [[(0, 5)], [(0, 3)], [(0, 8)]], expected: [nil, 0, nil]),
        Case(
            name: "a request with no candidate stays unassigned", columns: 2, pairs: [[], [(1, 2)]],
            expected: [nil, 1]),
        Case(
            name: "as many served as possible before cost: a cheap pair does not strand a second request", columns: 2,
            pairs: [[(0, 1), (1, 100)], [(0, 2)]], expected: [1, 0]),
        Case(
            name: "the cheaper of two pairs naming one provider counts", columns: 1,
            pairs: [[(0, 9), (0, 2)], [(0, 5)]],
            expected: [0, nil]),
        Case(
            name: "out-of-range columns and non-finite or negative costs are ignored", columns: 2,
            pairs: [[(5, 1), (0, .infinity), (1, -1)], [(0, .nan), (1, 3)]], expected: [nil, 1]),
        Case(name: "no providers at all", columns: 0, pairs: [[(0, 1)], []], expected: [nil, nil]),
        Case(
            name: "costs summing past 2^53: one more served still outweighs any cost", columns: 2,
            pairs: [[(0, 0), (1, 1e17)], [(0, 0)]], expected: [1, 0]),
        Case(
            name: "a long chain of displacements is found", columns: 4,
            pairs: [[(0, 1), (1, 2)], [(1, 1), (2, 2)], [(2, 1), (3, 2)], [(0, 1)]], expected: [1, 2, 3, 0]),
    ]

    @Test(arguments: cases)
    func assignsAsExpected(_ c: Case) {
        let candidates = c.pairs.map { $0.map { AssignmentCandidate(column: $0.0, cost: $0.1) } }
        #expect(Assignment.solve(columns: c.columns, candidates: candidates) == c.expected)
    }

    @Test func aDenseSquareInstanceMatchesTheKnownOptimum() {
        // The classic 4 × 4 example whose least total is 140 (each column once).
        let costs: [[Double]] = [[82, 83, 69, 92], [77, 37, 49, 92], [11, 69, 5, 86], [8, 9, 98, 23]]
        let assigned = Assignment.solve(dense: costs)
        #expect(assigned == [2, 1, 0, 3])
        #expect(zip(costs, assigned).map { $0[$1!] }.reduce(0, +) == 140)
    }

    @Test func equalsExhaustiveSearchOnSmallRandomSparseInstances() {
        var random = SeededRandom(seed: 42)
        for _ in 0..<400 {
            let rows = Int(random.next() % 6) + 1, columns = Int(random.next() % 6)
            let candidates = (0..<rows).map { _ in
                (0..<columns).compactMap { column -> AssignmentCandidate? in
                    random.next() % 3 == 0 ? nil : AssignmentCandidate(column: column, cost: Double(random.next() % 50))
                }
            }
            let assigned = Assignment.solve(columns: columns, candidates: candidates)
            let used = assigned.compactMap { $0 }
            #expect(Set(used).count == used.count, "a provider assigned twice")
            for (row, column) in assigned.enumerated() {
                if let column { #expect(candidates[row].contains { $0.column == column }) }
            }
            let best = Self.exhaustive(candidates)
            #expect(used.count == best.count, "\(candidates)")
            #expect(Assignment.total(assigned, candidates: candidates) == best.cost, "\(candidates)")
        }
    }

    @Test func aLargeSparseInstanceAssignsEveryRequestWhenProvidersAbound() {
        var random = SeededRandom(seed: 7)
        let columns = 5_000
        let candidates = (0..<2_000).map { _ in
            (0..<20).map { _ in
                AssignmentCandidate(column: Int(random.next() % UInt64(columns)), cost: Double(random.next() % 900))
            }
        }
        let assigned = Assignment.solve(columns: columns, candidates: candidates)
        let used = assigned.compactMap { $0 }
        #expect(Set(used).count == used.count)
        #expect(used.count >= 1_990)
    }

    /// The largest number of rows assigned, and the least total among assignments of that size, by trying them all.
    static func exhaustive(_ candidates: [[AssignmentCandidate]]) -> (count: Int, cost: Double) {
        var best = (count: 0, cost: 0.0)
        func visit(_ row: Int, _ used: Set<Int>, _ count: Int, _ cost: Double) {
            if row == candidates.count {
                if count > best.count || (count == best.count && cost < best.cost) { best = (count, cost) }
                return
            }
            visit(row + 1, used, count, cost)
            for pair in candidates[row] where !used.contains(pair.column) {
                visit(row + 1, used.union([pair.column]), count + 1, cost + pair.cost)
            }
        }
        visit(0, [], 0, 0)
        return best
    }
}
