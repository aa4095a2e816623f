/// Strongly connected components of a directed graph given as edge lists (Tarjan's algorithm, iterative).
enum StrongComponents {
    /// Each node's component label (0..<count) and the number of components.
    struct Labels {
        var labels: [Int32]
        var count: Int
    }

    /// Labels every node of the graph with nodes `0..<nodeCount` and edges `edgeFrom[i] → edgeTo[i]`.
    static func label(nodeCount: Int, edgeFrom: [Int32], edgeTo: [Int32]) -> Labels {
        var first = [Int32](repeating: 0, count: nodeCount + 1)
        for node in edgeFrom { first[Int(node) + 1] += 1 }
        for node in 0..<nodeCount { first[node + 1] += first[node] }
        var fill = first
        var heads = [Int32](repeating: 0, count: edgeFrom.count)
        for (edge, node) in edgeFrom.enumerated() {
            heads[Int(fill[Int(node)])] = edgeTo[edge]
            fill[Int(node)] += 1
        }

        var index = [Int32](repeating: -1, count: nodeCount)
        var low = [Int32](repeating: 0, count: nodeCount)
        var onStack = [Bool](repeating: false, count: nodeCount)
        var labels = [Int32](repeating: -1, count: nodeCount)
        var stack: [Int32] = []
        var call: [(node: Int32, next: Int32)] = []
        var counter: Int32 = 0
        var components = 0

        for root in 0..<nodeCount where index[root] < 0 {
            call.append((Int32(root), first[root]))
            index[root] = counter; low[root] = counter; counter += 1
            stack.append(Int32(root)); onStack[root] = true
            while let (node, next) = call.last {
                let v = Int(node)
                if next < first[v + 1] {
                    call[call.count - 1].next = next + 1
                    let w = Int(heads[Int(next)])
                    if index[w] < 0 {
                        index[w] = counter; low[w] = counter; counter += 1
                        stack.append(Int32(w)); onStack[w] = true
                        call.append((Int32(w), first[w]))
                    } else if onStack[w] {
                        low[v] = min(low[v], index[w])
                    }
                    continue
                }
                call.removeLast()
                if let parent = call.last { low[Int(parent.node)] = min(low[Int(parent.node)], low[v]) }
                if low[v] == index[v] {
                    while let w = stack.popLast() {
                        onStack[Int(w)] = false
                        labels[Int(w)] = Int32(components)
                        if Int(w) == v { break }
                    }
                    components += 1
                }
            }
        }
        return Labels(labels: labels, count: components)
    }

    /// The size of each node's component.
    static func componentSizes(nodeCount: Int, edgeFrom: [Int32], edgeTo: [Int32]) -> [Int] {
        let result = label(nodeCount: nodeCount, edgeFrom: edgeFrom, edgeTo: edgeTo)
        var size = [Int](repeating: 0, count: result.count)
        for label in result.labels { size[Int(label)] += 1 }
        return size
    }
}
