import OSMPBF
import Routing

extension RoadNetworkBuilder {
    /// Maps `no_*`/`only_*` restrictions with a via node onto the directed edges around it; a via way, or a
    /// restriction the network cannot hold, is counted by its reason and skipped.
    struct RestrictionMapper {
        /// Why a restriction was not applied (the report counts each reason).
        struct Skip: Error {
            let reason: String
            init(_ reason: String) { self.reason = reason }
        }

        private let denseOf: [Int64: Int32]
        private let blocks: [Bool]
        private let graphNodeOfDense: [Int32]
        private let finalNode: [Int32]
        private let edgeWayIDs: [Int64]
        private let edgeSegment: [Int32]
        private let usedWayIDs: Set<Int64>
        /// Each network node's arriving and departing edges.
        private let arrivals: [[Int32]]
        private let departures: [[Int32]]

        init(read: WayPass, nodes: NodeTable, splitter: WaySplitter, assembled: Assembled) {
            denseOf = read.denseOf
            blocks = nodes.blocks
            graphNodeOfDense = splitter.graphNodeOfDense
            finalNode = assembled.finalNode
            edgeWayIDs = assembled.edgeWayIDs
            edgeSegment = assembled.edgeSegment
            usedWayIDs = Set(read.ways.map(\.id))
            let network = assembled.network
            var arrivals = [[Int32]](repeating: [], count: network.nodeCount)
            var departures = [[Int32]](repeating: [], count: network.nodeCount)
            for edge in 0..<network.edgeCount {
                arrivals[Int(network.edgeTo[edge])].append(Int32(edge))
                departures[Int(network.edgeFrom[edge])].append(Int32(edge))
            }
            self.arrivals = arrivals
            self.departures = departures
        }

        /// Applies each relation in turn, counting what was applied and why the rest was skipped.
        func apply(
            _ relations: [OSMRelation], profile: CarProfile, to network: inout RoadNetwork, report: inout BuildReport
        ) {
            for relation in relations {
                do {
                    let pairs = try apply(relation, profile: profile, to: &network)
                    report.restrictionsApplied += 1
                    report.restrictionPairs += pairs
                } catch {
                    report.restrictionsSkipped[error.reason, default: 0] += 1
                }
            }
        }

        /// The turn pairs one relation adds.
        private func apply(
            _ relation: OSMRelation, profile: CarProfile, to network: inout RoadNetwork
        ) throws(Skip) -> Int {
            let restriction = try parse(relation, profile: profile)
            let via = try viaNode(of: restriction)
            let fromWays = Set(restriction.from), toWays = Set(restriction.to)
            let arriving = arrivals[Int(via)].filter { fromWays.contains(edgeWayIDs[Int($0)]) }
            let leaving = departures[Int(via)].filter { toWays.contains(edgeWayIDs[Int($0)]) }
            guard !arriving.isEmpty else { throw Skip("from way does not reach the via node") }
            if leaving.isEmpty, restriction.kind == .only, !usedWayIDs.isDisjoint(with: toWays),
                restriction.maneuver != "u_turn"
            {
                // The one way a car may take is a car way the network lost (an island cut off at the extract's
                // edge): every other way on stays forbidden, so the from way leads nowhere here.
                var pairs = 0
                for from in arriving {
                    for to in departures[Int(via)] {
                        network.addRestriction(TurnRestriction(fromEdge: from, viaNode: via, toEdge: to, kind: .no))
                        pairs += 1
                    }
                }
                return pairs
            }
            guard !leaving.isEmpty else { throw Skip("to way does not leave the via node") }
            let pairs = addPairs(restriction, from: arriving, via: via, to: leaving, in: &network)
            guard pairs > 0 else { throw Skip("no matching turn at the via node") }
            return pairs
        }

        /// The relation as the profile reads it.
        private func parse(_ relation: OSMRelation, profile: CarProfile) throws(Skip) -> CarProfile.Restriction {
            let members = relation.members.map { member in
                CarProfile.Member(
                    member.type == .node ? .node : member.type == .way ? .way : .relation, member.ref, role: member.role
                )
            }
            switch profile.restriction(relation.tags, members: members) {
            case .failure(let rejection): throw Skip(RoadNetworkBuilder.reason(rejection))
            case .success(let parsed): return parsed
            }
        }

        /// The network node the restriction's via node became.
        private func viaNode(of restriction: CarProfile.Restriction) throws(Skip) -> Int32 {
            guard case .node(let viaID) = restriction.via else { throw Skip("via way") }
            guard let dense = denseOf[viaID] else { throw Skip("via node not on a car way") }
            if blocks[Int(dense)] { throw Skip("via node is a blocking barrier") }
            let graph = graphNodeOfDense[Int(dense)]
            guard graph >= 0, finalNode[Int(graph)] >= 0 else { throw Skip("via node not in the network") }
            return finalNode[Int(graph)]
        }

        /// Adds the restriction for each arriving and leaving edge it names; the number of pairs added.
        private func addPairs(
            _ restriction: CarProfile.Restriction, from arriving: [Int32], via: Int32, to leaving: [Int32],
            in network: inout RoadNetwork
        ) -> Int {
            let kind: TurnRestriction.Kind = restriction.kind == .no ? .no : .only
            var pairs = 0
            for from in arriving {
                for to in leaving {
                    // On one way through the via node, a U-turn goes back along the same segment; any other
                    // manoeuvre goes on along the other one.
                    if edgeWayIDs[Int(from)] == edgeWayIDs[Int(to)] {
                        let sameSegment = edgeSegment[Int(from)] == edgeSegment[Int(to)]
                        if sameSegment != (restriction.maneuver == "u_turn") { continue }
                    }
                    network.addRestriction(TurnRestriction(fromEdge: from, viaNode: via, toEdge: to, kind: kind))
                    pairs += 1
                }
            }
            return pairs
        }
    }
}
