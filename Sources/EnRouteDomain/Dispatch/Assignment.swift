/// One pair a request may be matched to: a provider's column and what the match costs (road seconds to the pickup).
public struct AssignmentCandidate: Sendable, Equatable {
    public let column: Int
    public let cost: Double
    public init(column: Int, cost: Double) { self.column = column; self.cost = cost }
}

/// Minimum-cost assignment of rows (requests) to columns (providers) over the pairs each row may take: as many rows
/// assigned as can be, each to a column of its own, and among those assignments the one of least total cost.
///
/// Exact: successive shortest augmenting paths (Dijkstra over reduced costs, with column potentials), one row at a
/// time, over a sparse list of candidates per row. A row that cannot be matched without leaving an earlier-placed one
/// out competes through a private "unassigned" column whose cost exceeds any assignment's total, so that the number
/// assigned is the largest possible before cost is weighed.
public enum Assignment {
    /// For each row, the column it is assigned or nil. Costs must be finite and not negative; a column out of
    /// `0..<columns` or a non-finite cost is ignored, and of two pairs naming the same column the cheaper counts.
    public static func solve(columns: Int, candidates: [[AssignmentCandidate]]) -> [Int?] {
        var solver = Solver(columns: columns, candidates: candidates)
        return solver.run()
    }

    /// A dense instance: `costs[row][column]`, every pair allowed; rows beyond the number of columns stay unassigned.
    public static func solve(dense costs: [[Double]]) -> [Int?] {
        let columns = costs.map(\.count).max() ?? 0
        return solve(
            columns: columns,
            candidates: costs.map { row in row.enumerated().map { AssignmentCandidate(column: $0, cost: $1) } })
    }

    /// The summed cost of an assignment from `solve`, over the same candidates.
    public static func total(_ assigned: [Int?], candidates: [[AssignmentCandidate]]) -> Double {
        var sum = 0.0
        for (row, column) in assigned.enumerated() {
            guard let column else { continue }
            sum += candidates[row].filter { $0.column == column }.map(\.cost).min() ?? .nan
        }
        return sum
    }
}

/// The solver's working state: columns `0..<columns` are real, column `columns + row` is that row's unassigned one.
private struct Solver {
    struct Edge { var column: Int32; var cost: Double }

    let columns: Int
    let rows: Int
    /// Each row's edges, its unassigned column last.
    var edges: [[Edge]]
    /// Column potentials; a row's potential is kept implicitly tight on its matched edge.
    var potential: [Double]
    var rowOf: [Int32]
    var columnOf: [Int32]
    var matchedCost: [Double]
    // Dijkstra's scratch, reset through `touched`.
    var distance: [Double]
    var parentRow: [Int32]
    /// The cost of the edge from `parentRow` to the column.
    var parentCost: [Double]
    var done: [Bool]
    var touched: [Int32] = []
    var heap = ColumnHeap()

    init(columns: Int, candidates: [[AssignmentCandidate]]) {
        self.columns = columns
        rows = candidates.count
        var total = 0.0
        edges = candidates.enumerated().map { row, pairs in
            var cheapest: [Int: Double] = [:]
            for pair in pairs where (0..<columns).contains(pair.column) && pair.cost.isFinite && pair.cost >= 0 {
                cheapest[pair.column] = min(cheapest[pair.column] ?? .infinity, pair.cost)
            }
            total += cheapest.values.max() ?? 0
            return cheapest.sorted { $0.key < $1.key }.map { Edge(column: Int32($0.key), cost: $0.value) }
        }
        // Any assignment costs at most `total`: leaving one more row unassigned must always cost more. Twice the total
        // keeps that margin where `total + 1` rounds to `total` (sums past 2^53) or rounding eats a margin of one.
        let unassigned = 2 * total + 1
        for row in 0..<rows { edges[row].append(Edge(column: Int32(columns + row), cost: unassigned)) }
        let width = columns + rows
        potential = Array(repeating: 0, count: width)
        rowOf = Array(repeating: -1, count: width)
        columnOf = Array(repeating: -1, count: rows)
        matchedCost = Array(repeating: 0, count: rows)
        distance = Array(repeating: .infinity, count: width)
        parentRow = Array(repeating: -1, count: width)
        parentCost = Array(repeating: 0, count: width)
        done = Array(repeating: false, count: width)
    }

    mutating func run() -> [Int?] {
        for row in 0..<rows { augment(from: row) }
        return columnOf.map { $0 >= 0 && Int($0) < columns ? Int($0) : nil }
    }

    /// The row's potential: the reduced cost of its matched edge is zero.
    func rowPotential(_ row: Int) -> Double { matchedCost[row] - potential[Int(columnOf[row])] }

    /// Finds the cheapest augmenting path from the free `start` row to a free column, updates the potentials so that
    /// every reduced cost stays non-negative, and flips the path.
    mutating func augment(from start: Int) {
        // The free row's potential: the least reduced cost over its edges becomes zero.
        var startPotential = Double.infinity
        for edge in edges[start] { startPotential = min(startPotential, edge.cost - potential[Int(edge.column)]) }
        relax(row: start, rowPotential: startPotential, at: 0)
        var sink = -1
        var sinkDistance = 0.0
        var finished: [Int32] = []
        while let top = heap.pop() {
            let (column, d) = top
            let j = Int(column)
            if done[j] || d > distance[j] { continue }
            done[j] = true
            finished.append(column)
            let owner = Int(rowOf[j])
            if owner < 0 {
                sink = j; sinkDistance = d
                break
            }
            relax(row: owner, rowPotential: rowPotential(owner), at: d)
        }
        precondition(sink >= 0, "every row has its unassigned column")
        for column in finished where Int(column) != sink {
            let j = Int(column)
            potential[j] -= sinkDistance - distance[j]
        }
        // Flip the path: each column on it goes to the row that reached it.
        var j = sink
        while true {
            let row = Int(parentRow[j])
            let previous = Int(columnOf[row])
            rowOf[j] = Int32(row)
            columnOf[row] = Int32(j)
            matchedCost[row] = parentCost[j]
            if row == start { break }
            j = previous
        }
        for column in touched {
            let j = Int(column)
            distance[j] = .infinity; parentRow[j] = -1; done[j] = false
        }
        touched.removeAll(keepingCapacity: true)
        heap.removeAll()
    }

    mutating func relax(row: Int, rowPotential u: Double, at base: Double) {
        for edge in edges[row] {
            let j = Int(edge.column)
            if done[j] { continue }
            let d = base + max(0, edge.cost - u - potential[j])
            if d < distance[j] {
                if distance[j] == .infinity { touched.append(edge.column) }
                distance[j] = d
                parentRow[j] = Int32(row)
                parentCost[j] = edge.cost
                heap.push(edge.column, d)
            }
        }
    }
}

/// A binary min-heap of (column, distance) with stale entries skipped by the caller.
private struct ColumnHeap {
    private var items: [(column: Int32, distance: Double)] = []

    mutating func removeAll() { items.removeAll(keepingCapacity: true) }

    mutating func push(_ column: Int32, _ distance: Double) {
        items.append((column, distance))
        var i = items.count - 1
        while i > 0 {
            let parent = (i - 1) / 2
            guard items[i].distance < items[parent].distance else { break }
            items.swapAt(i, parent)
            i = parent
        }
    }

    mutating func pop() -> (Int32, Double)? {
        guard let top = items.first else { return nil }
        let last = items.removeLast()
        if !items.isEmpty {
            items[0] = last
            var i = 0
            while true {
                let l = 2 * i + 1, r = l + 1
                var least = i
                if l < items.count, items[l].distance < items[least].distance { least = l }
                if r < items.count, items[r].distance < items[least].distance { least = r }
                guard least != i else { break }
                items.swapAt(i, least)
                i = least
            }
        }
        return (top.column, top.distance)
    }
}
