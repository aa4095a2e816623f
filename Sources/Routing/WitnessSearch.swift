/// The contraction's witness-search state, allocated once for all searches: distances, hops and a timestamp per
/// node (a search clears nothing but its heap), and an indexed binary heap, all in raw buffers so the hot loop
/// runs without copy-on-write or exclusivity checks.
final class WitnessState {
    let distance: UnsafeMutablePointer<Int>
    let hops: UnsafeMutablePointer<Int32>
    let stamp: UnsafeMutablePointer<UInt32>
    /// Each node's position in the heap, or -1.
    private let position: UnsafeMutablePointer<Int32>
    private let heapNode: UnsafeMutablePointer<Int32>
    private let heapKey: UnsafeMutablePointer<Int>
    private(set) var heapCount = 0
    private(set) var epoch: UInt32 = 0
    private let capacity: Int

    init(capacity: Int) {
        self.capacity = max(capacity, 1)
        distance = .allocate(capacity: self.capacity)
        hops = .allocate(capacity: self.capacity)
        stamp = .allocate(capacity: self.capacity)
        stamp.initialize(repeating: 0, count: self.capacity)
        position = .allocate(capacity: self.capacity)
        position.initialize(repeating: -1, count: self.capacity)
        heapNode = .allocate(capacity: self.capacity)
        heapKey = .allocate(capacity: self.capacity)
    }

    deinit {
        distance.deallocate(); hops.deallocate(); stamp.deallocate()
        position.deallocate(); heapNode.deallocate(); heapKey.deallocate()
    }

    /// Starts a new search: empties the heap and makes every node's distance unknown.
    @inline(__always) func begin() {
        for index in 0..<heapCount { position[Int(heapNode[index])] = -1 }
        heapCount = 0
        epoch &+= 1
        if epoch == 0 {
            stamp.update(repeating: 0, count: capacity)
            epoch = 1
        }
    }

    /// Whether `node` has a distance in this search.
    @inline(__always) func reached(_ node: Int) -> Bool { stamp[node] == epoch }

    /// Records `key` for `node` at `hopCount` if it improves on what the search has, and queues it.
    @inline(__always) func relax(_ node: Int32, key: Int, hopCount: Int32) {
        let index = Int(node)
        if stamp[index] == epoch {
            guard key < distance[index] else { return }
        }
        stamp[index] = epoch
        distance[index] = key
        hops[index] = hopCount
        let at = position[index]
        if at >= 0 {
            siftUp(Int(at), node: node, key: key)
        } else {
            heapCount += 1
            siftUp(heapCount - 1, node: node, key: key)
        }
    }

    var isEmpty: Bool { heapCount == 0 }

    /// Removes and returns the queued node with the smallest key.
    @inline(__always) func popMin() -> (node: Int32, key: Int) {
        let top = heapNode[0], key = heapKey[0]
        position[Int(top)] = -1
        heapCount -= 1
        if heapCount > 0 { siftDown(node: heapNode[heapCount], key: heapKey[heapCount]) }
        return (top, key)
    }

    @inline(__always) private func siftUp(_ start: Int, node: Int32, key: Int) {
        var child = start
        while child > 0 {
            let parent = (child - 1) >> 1
            guard heapKey[parent] > key else { break }
            heapNode[child] = heapNode[parent]
            heapKey[child] = heapKey[parent]
            position[Int(heapNode[child])] = Int32(child)
            child = parent
        }
        heapNode[child] = node
        heapKey[child] = key
        position[Int(node)] = Int32(child)
    }

    @inline(__always) private func siftDown(node: Int32, key: Int) {
        var parent = 0
        let count = heapCount
        while true {
            var child = 2 * parent + 1
            guard child < count else { break }
            if child + 1 < count, heapKey[child + 1] < heapKey[child] { child += 1 }
            guard heapKey[child] < key else { break }
            heapNode[parent] = heapNode[child]
            heapKey[parent] = heapKey[child]
            position[Int(heapNode[parent])] = Int32(parent)
            parent = child
        }
        heapNode[parent] = node
        heapKey[parent] = key
        position[Int(node)] = Int32(parent)
    }
}
