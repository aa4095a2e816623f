import Routing

extension RoadNetworkBuilder {
    /// The network of the kept nodes and edges, with what the restrictions are mapped by.
    struct Assembled {
        var network: RoadNetwork
        /// Each graph node's network node, -1 for a node dropped with its island.
        var finalNode: [Int32]
        /// The OSM way each network edge comes from.
        var edgeWayIDs: [Int64]
        /// The segment each network edge comes from.
        var edgeSegment: [Int32]
    }

    /// Adds the kept graph nodes (a barrier's copy without its delay) and the edges between them, each timed at its
    /// way's speed in its direction.
    static func assemble(
        profile: CarProfile, read: WayPass, nodes: NodeTable, splitter: WaySplitter, edges: PendingEdges, keep: [Bool],
        report: inout BuildReport
    ) -> Assembled {
        var network = RoadNetwork(
            turnCosts: TurnCosts(uTurnSeconds: profile.uTurnSeconds) { profile.turnCost(angleDegrees: $0) })
        var finalNode = [Int32](repeating: -1, count: splitter.graphNodeDense.count)
        for node in splitter.graphNodeDense.indices where keep[node] {
            let dense = Int(splitter.graphNodeDense[node])
            let delay = splitter.graphNodeIsBarrierCopy[node] ? 0 : nodes.delays[dense]
            if delay > 0 { report.delayNodes += 1 }
            finalNode[node] = network.addNode(
                id: read.osmIDs[dense], lat: nodes.lats[dense], lon: nodes.lons[dense], delaySeconds: delay)
        }
        let classRaw = Dictionary(uniqueKeysWithValues: RoadClass.allCases.map { ($0, rawValue(of: $0)) })
        var edgeWayIDs: [Int64] = []
        var edgeSegment: [Int32] = []
        for pending in edges.from.indices {
            let from = finalNode[Int(edges.from[pending])], to = finalNode[Int(edges.to[pending])]
            guard from >= 0, to >= 0 else { report.islandEdgesRemoved += 1; continue }
            let segment = splitter.segments[Int(edges.segment[pending])]
            let way = read.ways[Int(segment.way)]
            let forward = edges.forward[pending]
            let speedKmh = forward ? way.attributes.forwardSpeedKmh : way.attributes.backwardSpeedKmh
            let seconds = max(minimumEdgeSeconds, segment.lengthMeters / (speedKmh / 3.6))
            network.addEdge(
                from: from, to: to, lengthMeters: segment.lengthMeters, durationSeconds: seconds,
                roadClass: classRaw[way.attributes.roadClass]!, name: way.attributes.name ?? "",
                geometry: forward ? segment.points : segment.points.reversed(),
                destinationOnly: forward
                    ? way.attributes.forwardDestinationOnly : way.attributes.backwardDestinationOnly,
                roundabout: way.attributes.isRoundabout)
            edgeWayIDs.append(way.id)
            edgeSegment.append(edges.segment[pending])
        }
        return Assembled(network: network, finalNode: finalNode, edgeWayIDs: edgeWayIDs, edgeSegment: edgeSegment)
    }
}
