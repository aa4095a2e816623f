extension RoadNetwork {
    /// The same network with each edge's duration replaced (one per edge, in seconds): the weights to build a
    /// turn graph and hierarchy from for an hour of the week or live speeds.
    public func withEdgeDurations(_ durations: [Double]) -> RoadNetwork {
        precondition(durations.count == edgeCount, "one duration per edge")
        return RoadNetwork(
            nodeIDs: nodeIDs, nodeLats: nodeLats, nodeLons: nodeLons, nodeDelaySeconds: nodeDelaySeconds,
            edgeFrom: edgeFrom, edgeTo: edgeTo, edgeLengthMeters: edgeLengthMeters, edgeDurationSeconds: durations,
            edgeRoadClass: edgeRoadClass, edgeNameIndex: edgeNameIndex, geometryStart: geometryStart,
            geometryLats: geometryLats, geometryLons: geometryLons, names: names, restrictions: restrictions,
            turnCosts: turnCosts, edgeIsDestinationOnly: edgeIsDestinationOnly,
            edgeIsRoundabout: edgeIsRoundabout)
    }
}
