/// An indexed binary min-heap over node ids `0..<capacity` with `Int` keys: decrease-key in place, storage
/// allocated once and reused across searches.
struct MinHeap {
    private var heap: [Int32] = []
    private var keys: [Int] = []
    /// Each node's position in `heap`, or -1.
    private var position: [Int32]

    init(capacity: Int) {
        position = [Int32](repeating: -1, count: capacity)
        heap.reserveCapacity(min(capacity, 1 << 16))
        keys.reserveCapacity(min(capacity, 1 << 16))
    }

    var isEmpty: Bool { heap.isEmpty }
    var count: Int { heap.count }
    /// The smallest key, or `Int.max` when empty.
    var minKey: Int { keys.first ?? Int.max }

    func contains(_ node: Int32) -> Bool { position[Int(node)] >= 0 }

    /// Inserts `node` or lowers its key; a higher key for a present node is ignored.
    mutating func pushOrDecrease(_ node: Int32, key: Int) {
        let at = position[Int(node)]
        if at >= 0 {
            if key < keys[Int(at)] {
                keys[Int(at)] = key
                siftUp(Int(at))
            }
        } else {
            heap.append(node)
            keys.append(key)
            position[Int(node)] = Int32(heap.count - 1)
            siftUp(heap.count - 1)
        }
    }

    /// Sets the key of a present node (up or down) or inserts it.
    mutating func update(_ node: Int32, key: Int) {
        let at = position[Int(node)]
        guard at >= 0 else { return pushOrDecrease(node, key: key) }
        let old = keys[Int(at)]
        keys[Int(at)] = key
        if key < old { siftUp(Int(at)) } else { siftDown(Int(at)) }
    }

    /// Removes and returns the node with the smallest key.
    mutating func popMin() -> (node: Int32, key: Int) {
        let top = heap[0], key = keys[0]
        position[Int(top)] = -1
        let last = heap.removeLast(), lastKey = keys.removeLast()
        if !heap.isEmpty {
            heap[0] = last
            keys[0] = lastKey
            position[Int(last)] = 0
            siftDown(0)
        }
        return (top, key)
    }

    /// Empties the heap, touching only the nodes still in it.
    mutating func clear() {
        for node in heap { position[Int(node)] = -1 }
        heap.removeAll(keepingCapacity: true)
        keys.removeAll(keepingCapacity: true)
    }

    private mutating func siftUp(_ start: Int) {
        var child = start
        let node = heap[child], key = keys[child]
        while child > 0 {
            let parent = (child - 1) / 2
            guard keys[parent] > key else { break }
            heap[child] = heap[parent]
            keys[child] = keys[parent]
            position[Int(heap[child])] = Int32(child)
            child = parent
        }
        heap[child] = node
        keys[child] = key
        position[Int(node)] = Int32(child)
    }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        let node = heap[parent], key = keys[parent]
        let count = heap.count
        while true {
            var child = 2 * parent + 1
            guard child < count else { break }
            if child + 1 < count, keys[child + 1] < keys[child] { child += 1 }
            guard keys[child] < key else { break }
            heap[parent] = heap[child]
            keys[parent] = keys[child]
            position[Int(heap[parent])] = Int32(parent)
            parent = child
        }
        heap[parent] = node
        keys[parent] = key
        position[Int(node)] = Int32(parent)
    }
}
