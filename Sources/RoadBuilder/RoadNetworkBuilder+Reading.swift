import OSMPBF
import Routing

/// The builder's two passes over the file: ways and restriction relations first, then the nodes those ways use.
extension RoadNetworkBuilder {
    /// What the first pass keeps: the usable ways, the nodes they reference (dense indices in the order first seen),
    /// how many usable ways reference each (up to 255), and the restriction relations.
    struct WayPass {
        var denseOf: [Int64: Int32] = [:]
        var osmIDs: [Int64] = []
        var useCount: [UInt8] = []
        var ways: [UsedWay] = []
        var restrictionRelations: [OSMRelation] = []
    }

    /// What the second pass reads for each referenced node: its position (NaN where the file lacks the node), its
    /// delay in seconds, and whether it blocks cars.
    struct NodeTable {
        var lats: [Double]
        var lons: [Double]
        var delays: [Double]
        var blocks: [Bool]

        init(count: Int) {
            lats = [Double](repeating: .nan, count: count)
            lons = [Double](repeating: .nan, count: count)
            delays = [Double](repeating: 0, count: count)
            blocks = [Bool](repeating: false, count: count)
        }
    }

    /// Pass 1: the ways the profile lets cars use, with their nodes numbered densely, and the restriction relations.
    static func readWays(_ reader: OSMReader, profile: CarProfile, report: inout BuildReport) throws -> WayPass {
        var pass = WayPass()
        var waysRead = 0
        try reader.read(
            ways: { way in
                waysRead += 1
                guard way.refs.count >= 2, let attributes = profile.way(way.tags) else { return }
                var refs: [Int32] = []
                refs.reserveCapacity(way.refs.count)
                var previous: Int64?
                for ref in way.refs where ref != previous {
                    previous = ref
                    let index: Int32
                    if let known = pass.denseOf[ref] {
                        index = known
                    } else {
                        index = Int32(pass.osmIDs.count)
                        pass.denseOf[ref] = index
                        pass.osmIDs.append(ref)
                        pass.useCount.append(0)
                    }
                    if pass.useCount[Int(index)] < 255 { pass.useCount[Int(index)] += 1 }
                    refs.append(index)
                }
                guard refs.count >= 2 else { return }
                pass.ways.append(UsedWay(id: way.id, refs: refs, attributes: attributes))
            },
            relations: { relation in
                if relation.tags["type"] == "restriction" { pass.restrictionRelations.append(relation) }
            })
        report.waysRead += waysRead
        report.waysUsed = pass.ways.count
        report.restrictionsRead = pass.restrictionRelations.count
        return pass
    }

    /// Pass 2: the positions, delays and barriers of the nodes the usable ways reference.
    static func readNodes(
        _ reader: OSMReader, referencedBy pass: WayPass, profile: CarProfile, report: inout BuildReport
    ) throws -> NodeTable {
        var table = NodeTable(count: pass.osmIDs.count)
        var nodesRead = 0
        let denseOf = pass.denseOf
        try reader.read(nodes: { node in
            nodesRead += 1
            guard let index = denseOf[node.id].map(Int.init) else { return }
            table.lats[index] = node.lat
            table.lons[index] = node.lon
            if !node.tags.isEmpty {
                let delay = profile.nodeDelay(node.tags)
                table.delays[index] = delay.seconds
                table.blocks[index] = delay.blocksCars
            }
        })
        report.nodesRead += nodesRead
        return table
    }
}
