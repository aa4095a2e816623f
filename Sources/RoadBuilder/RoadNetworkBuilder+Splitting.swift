import Routing

extension RoadNetworkBuilder {
    /// Cuts the usable ways into segments between graph nodes: at their ends, at nodes other usable ways share, at
    /// delay nodes and at barriers. A blocking barrier cuts the way (each side ends at its own copy of the barrier
    /// node), and so does a reference to a node the file does not hold.
    struct WaySplitter {
        private let nodes: NodeTable
        private let useCount: [UInt8]
        /// Each dense node's graph node, -1 while it has none (a barrier's copies are not recorded here).
        private(set) var graphNodeOfDense: [Int32]
        /// Each graph node's dense node.
        private(set) var graphNodeDense: [Int32] = []
        /// Whether each graph node is a blocking barrier's copy.
        private(set) var graphNodeIsBarrierCopy: [Bool] = []
        private(set) var segments: [Segment] = []

        init(nodes: NodeTable, useCount: [UInt8]) {
            self.nodes = nodes
            self.useCount = useCount
            graphNodeOfDense = [Int32](repeating: -1, count: nodes.lats.count)
        }

        /// Splits every way, counting missing node references, zero-length segments and blocking barriers.
        mutating func split(_ ways: [UsedWay], report: inout BuildReport) {
            var blockingSeen = Set<Int32>()
            for (wayIndex, way) in ways.enumerated() {
                var current: [Int32] = []
                var startCopy = false
                for dense in way.refs {
                    let index = Int(dense)
                    if nodes.lats[index].isNaN {
                        report.missingNodeRefs += 1
                        emit(current[...], way: Int32(wayIndex), startCopy: startCopy, endCopy: false, report: &report)
                        current = []
                        startCopy = false
                        continue
                    }
                    current.append(dense)
                    if nodes.blocks[index] {
                        blockingSeen.insert(dense)
                        emit(current[...], way: Int32(wayIndex), startCopy: startCopy, endCopy: true, report: &report)
                        current = [dense]
                        startCopy = true
                    } else if current.count >= 2, useCount[index] > 1 || nodes.delays[index] > 0 {
                        emit(current[...], way: Int32(wayIndex), startCopy: startCopy, endCopy: false, report: &report)
                        current = [dense]
                        startCopy = false
                    }
                }
                emit(current[...], way: Int32(wayIndex), startCopy: startCopy, endCopy: false, report: &report)
            }
            report.blockingBarriers = blockingSeen.count
        }

        /// The graph node of a dense node, made on first use; a barrier's copy is a new node every time.
        private mutating func graphNode(_ dense: Int32, barrierCopy: Bool) -> Int32 {
            if !barrierCopy, graphNodeOfDense[Int(dense)] >= 0 { return graphNodeOfDense[Int(dense)] }
            let node = Int32(graphNodeDense.count)
            graphNodeDense.append(dense)
            graphNodeIsBarrierCopy.append(barrierCopy)
            if !barrierCopy { graphNodeOfDense[Int(dense)] = node }
            return node
        }

        /// Adds the segment along `refs` (nothing for fewer than two nodes).
        private mutating func emit(
            _ refs: ArraySlice<Int32>, way: Int32, startCopy: Bool, endCopy: Bool, report: inout BuildReport
        ) {
            guard refs.count >= 2 else { return }
            if refs.first == refs.last, !startCopy, !endCopy {
                // A closed loop back to one node: split it in the middle so no edge is a self-loop.
                guard refs.count >= 3 else { return }
                let middle = refs.startIndex + refs.count / 2
                emit(refs[refs.startIndex...middle], way: way, startCopy: false, endCopy: false, report: &report)
                emit(refs[middle...], way: way, startCopy: false, endCopy: false, report: &report)
                return
            }
            let points = refs.map { RoadCoordinate(lat: nodes.lats[Int($0)], lon: nodes.lons[Int($0)]) }
            let length = RoadNetworkBuilder.length(of: points)
            if length == 0 { report.zeroLengthSegments += 1 }
            let from = graphNode(refs.first!, barrierCopy: startCopy)
            let to = graphNode(refs.last!, barrierCopy: endCopy)
            segments.append(Segment(way: way, from: from, to: to, points: points, lengthMeters: length))
        }
    }
}
