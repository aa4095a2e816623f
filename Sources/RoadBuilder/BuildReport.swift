import Foundation

/// What `RoadNetworkBuilder.build` read, kept and dropped, and how long it took.
public struct BuildReport: Sendable, Equatable {
    /// Ways in the file.
    public var waysRead = 0
    /// Ways the car profile accepted (before islands were removed).
    public var waysUsed = 0
    /// Nodes in the file.
    public var nodesRead = 0
    /// Graph nodes in the finished network (junctions, way ends, delay and barrier nodes).
    public var nodes = 0
    /// Directed edges in the finished network.
    public var edges = 0
    /// Network nodes that carry a delay (signals, stops, give-way, passable barriers).
    public var delayNodes = 0
    /// Nodes of used ways whose barrier blocks cars; the way is cut there.
    public var blockingBarriers = 0
    /// References from used ways to nodes the file does not hold (clipped extracts); the way is cut there.
    public var missingNodeRefs = 0
    /// Segments between two graph nodes of zero length (duplicate positions); kept, with the minimum duration.
    public var zeroLengthSegments = 0
    /// Restriction relations in the file (`type=restriction`).
    public var restrictionsRead = 0
    /// Restrictions mapped onto the network's edges.
    public var restrictionsApplied = 0
    /// Turn-restriction pairs (from-edge, to-edge) added to the network for the applied restrictions.
    public var restrictionPairs = 0
    /// Restrictions not applied, by reason (`via way`, `not for cars`, `from way not routable`...).
    public var restrictionsSkipped: [String: Int] = [:]
    /// Strongly connected components smaller than the island threshold that were removed.
    public var islandsRemoved = 0
    /// Graph nodes those islands held.
    public var islandNodesRemoved = 0
    /// Directed edges dropped with them.
    public var islandEdgesRemoved = 0
    /// Wall time of the whole build.
    public var buildTime: Duration = .zero

    /// Every skipped restriction, whatever the reason.
    public var restrictionsSkippedTotal: Int { restrictionsSkipped.values.reduce(0, +) }

    /// A few lines for a terminal.
    public var summary: String {
        let skipped = restrictionsSkipped.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }
            .map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        let seconds = Double(buildTime.components.seconds) + Double(buildTime.components.attoseconds) / 1e18
        return """
            ways: \(waysUsed) used of \(waysRead); nodes read: \(nodesRead); missing node refs: \(missingNodeRefs)
            network: \(nodes) nodes, \(edges) directed edges, \(delayNodes) delay nodes, \(blockingBarriers) \
            blocking barriers
            restrictions: \(restrictionsApplied) applied (\(restrictionPairs) turn pairs), \(restrictionsSkippedTotal) \
            skipped\(skipped.isEmpty ? "" : " (\(skipped))") of \(restrictionsRead)
            islands removed: \(islandsRemoved) (\(islandNodesRemoved) nodes, \(islandEdgesRemoved) edges)
            build time: \(String(format: "%.2f", seconds)) s
            """
    }
}
