import Foundation
import OSMKit
public import Routing

/// Builds a car `RoadNetwork` from an OSM PBF file with a `CarProfile`.
///
/// Two passes over the file: ways and relations first (which ways a car may use, which of their nodes are shared,
/// the turn restrictions), then nodes (positions of the used nodes, their delays and barriers). Each usable way is
/// split into segments at its ends, at nodes other usable ways share, at delay nodes and at barriers; each segment
/// becomes one directed edge per direction the profile allows, with duration = length / speed. A blocking barrier
/// cuts the way (each side ends at its own copy of the barrier node), and so does a reference to a node the file
/// does not hold. Strongly connected components smaller than `minimumComponentSize` nodes are dropped unless they
/// hold `minimumComponentMeters` of road and hang off a larger network, and
/// `no_*`/`only_*` restrictions with a via node are mapped onto the directed edges around it (via-way
/// restrictions are counted and skipped).
public enum RoadNetworkBuilder {
    /// The island threshold in graph nodes (the bench runs OSRM with the same `--small-component-size 50`).
    public static let defaultMinimumComponentSize = 50
    /// The island threshold in metres of road: a part holding this much road is kept whatever its node count when
    /// it hangs off a larger network (a car park's aisles are a few hundred metres; a district one-way streets cut
    /// off at an extract's edge is more).
    public static let defaultMinimumComponentMeters = 1_000.0
    /// No edge is faster than this many seconds (one decisecond, the router's weight unit).
    public static let minimumEdgeSeconds = 0.1

    /// Reads the PBF at `path` and builds its car network and report; `progress` gets one line per phase.
    public static func build(
        osm path: String, profile: CarProfile = .standard,
        minimumComponentSize: Int = defaultMinimumComponentSize,
        minimumComponentMeters: Double = defaultMinimumComponentMeters,
        now: () -> ContinuousClock.Instant = { ContinuousClock.now },
        progress: (String) -> Void = { _ in }
    ) throws -> (RoadNetwork, BuildReport) {
        let built = try build(
            reader: OSMReader(path: path), profile: profile, minimumComponentSize: minimumComponentSize,
            minimumComponentMeters: minimumComponentMeters, now: now, progress: progress)
        return (built.network, built.report)
    }

    /// The raw class value `RoadNetwork.edgeRoadClass` holds for a class: its position in `RoadClass.allCases`.
    public static func rawValue(of roadClass: RoadClass) -> UInt8 { roadClass.edgeRawValue }

    /// The class of a raw `RoadNetwork.edgeRoadClass` value written by the builder.
    public static func roadClass(raw: UInt8) -> RoadClass? { RoadClass(edgeRawValue: raw) }

    /// A build's network, its report, and each edge's OSM way id (for tests and diagnostics).
    struct Built: Sendable {
        var network: RoadNetwork
        var report: BuildReport
        /// The OSM way each directed edge comes from.
        var edgeWayIDs: [Int64]
    }

    /// One usable way: its OSM id, its node references as dense indices, and what the profile made of it.
    private struct UsedWay {
        var id: Int64
        var refs: [Int32]
        var attributes: WayAttributes
    }

    /// A piece of a way between two graph nodes.
    private struct Segment {
        var way: Int32
        var from: Int32
        var to: Int32
        var points: [RoadCoordinate]
        var lengthMeters: Double
    }

    static func build(
        reader: OSMReader, profile: CarProfile, minimumComponentSize: Int,
        minimumComponentMeters: Double = defaultMinimumComponentMeters, now: () -> ContinuousClock.Instant,
        progress: (String) -> Void
    ) throws -> Built {
        let start = now()
        var report = BuildReport()

        // Pass 1: ways and restriction relations.
        var denseOf: [Int64: Int32] = [:]
        var osmIDs: [Int64] = []
        var useCount: [UInt8] = []
        var ways: [UsedWay] = []
        var restrictionRelations: [OSMRelation] = []
        try reader.read(
            ways: { way in
                report.waysRead += 1
                guard way.refs.count >= 2, let attributes = profile.way(way.tags) else { return }
                var refs: [Int32] = []
                refs.reserveCapacity(way.refs.count)
                var previous: Int64?
                for ref in way.refs where ref != previous {
                    previous = ref
                    let index: Int32
                    if let known = denseOf[ref] {
                        index = known
                    } else {
                        index = Int32(osmIDs.count)
                        denseOf[ref] = index
                        osmIDs.append(ref)
                        useCount.append(0)
                    }
                    if useCount[Int(index)] < 255 { useCount[Int(index)] += 1 }
                    refs.append(index)
                }
                guard refs.count >= 2 else { return }
                ways.append(UsedWay(id: way.id, refs: refs, attributes: attributes))
            },
            relations: { relation in
                if relation.tags["type"] == "restriction" { restrictionRelations.append(relation) }
            })
        report.waysUsed = ways.count
        report.restrictionsRead = restrictionRelations.count
        progress("ways: \(ways.count) car ways of \(report.waysRead), \(osmIDs.count) nodes referenced")

        // Pass 2: positions, delays and barriers of the referenced nodes.
        let denseCount = osmIDs.count
        var lats = [Double](repeating: .nan, count: denseCount)
        var lons = [Double](repeating: .nan, count: denseCount)
        var delays = [Double](repeating: 0, count: denseCount)
        var blocks = [Bool](repeating: false, count: denseCount)
        try reader.read(nodes: { node in
            report.nodesRead += 1
            guard let index = denseOf[node.id].map(Int.init) else { return }
            lats[index] = node.lat
            lons[index] = node.lon
            if !node.tags.isEmpty {
                let delay = profile.nodeDelay(node.tags)
                delays[index] = delay.seconds
                blocks[index] = delay.blocksCars
            }
        })
        progress("nodes: \(report.nodesRead) read")

        // Split the ways into segments between graph nodes.
        var graphNodeOfDense = [Int32](repeating: -1, count: denseCount)
        var graphNodeDense: [Int32] = []
        var graphNodeIsBarrierCopy: [Bool] = []
        var segments: [Segment] = []
        var blockingSeen = Set<Int32>()

        func graphNode(_ dense: Int32, barrierCopy: Bool) -> Int32 {
            if !barrierCopy, graphNodeOfDense[Int(dense)] >= 0 { return graphNodeOfDense[Int(dense)] }
            let node = Int32(graphNodeDense.count)
            graphNodeDense.append(dense)
            graphNodeIsBarrierCopy.append(barrierCopy)
            if !barrierCopy { graphNodeOfDense[Int(dense)] = node }
            return node
        }

        func emit(_ refs: ArraySlice<Int32>, way: Int32, startCopy: Bool, endCopy: Bool) {
            guard refs.count >= 2 else { return }
            if refs.first == refs.last, !startCopy, !endCopy {
                // A closed loop back to one node: split it in the middle so no edge is a self-loop.
                guard refs.count >= 3 else { return }
                let middle = refs.startIndex + refs.count / 2
                emit(refs[refs.startIndex...middle], way: way, startCopy: false, endCopy: false)
                emit(refs[middle...], way: way, startCopy: false, endCopy: false)
                return
            }
            let points = refs.map { RoadCoordinate(lat: lats[Int($0)], lon: lons[Int($0)]) }
            let length = Self.length(of: points)
            if length == 0 { report.zeroLengthSegments += 1 }
            segments.append(
                Segment(
                    way: way, from: graphNode(refs.first!, barrierCopy: startCopy),
                    to: graphNode(refs.last!, barrierCopy: endCopy), points: points, lengthMeters: length))
        }

        for (wayIndex, way) in ways.enumerated() {
            var current: [Int32] = []
            var startCopy = false
            for dense in way.refs {
                let index = Int(dense)
                if lats[index].isNaN {
                    report.missingNodeRefs += 1
                    emit(current[...], way: Int32(wayIndex), startCopy: startCopy, endCopy: false)
                    current = []
                    startCopy = false
                    continue
                }
                current.append(dense)
                if blocks[index] {
                    blockingSeen.insert(dense)
                    emit(current[...], way: Int32(wayIndex), startCopy: startCopy, endCopy: true)
                    current = [dense]
                    startCopy = true
                } else if current.count >= 2, useCount[index] > 1 || delays[index] > 0 {
                    emit(current[...], way: Int32(wayIndex), startCopy: startCopy, endCopy: false)
                    current = [dense]
                    startCopy = false
                }
            }
            emit(current[...], way: Int32(wayIndex), startCopy: startCopy, endCopy: false)
        }
        report.blockingBarriers = blockingSeen.count
        progress("segments: \(segments.count) between \(graphNodeDense.count) graph nodes")

        // Directed edges, then islands.
        var pendingFrom: [Int32] = [], pendingTo: [Int32] = [], pendingSegment: [Int32] = [],
            pendingForward: [Bool] = []
        for (index, segment) in segments.enumerated() {
            let attributes = ways[Int(segment.way)].attributes
            if attributes.forward {
                pendingFrom.append(segment.from); pendingTo.append(segment.to)
                pendingSegment.append(Int32(index)); pendingForward.append(true)
            }
            if attributes.backward {
                pendingFrom.append(segment.to); pendingTo.append(segment.from)
                pendingSegment.append(Int32(index)); pendingForward.append(false)
            }
        }
        let component = StrongComponents.label(
            nodeCount: graphNodeDense.count, edgeFrom: pendingFrom, edgeTo: pendingTo)
        var componentSize = [Int](repeating: 0, count: component.count)
        for label in component.labels { componentSize[Int(label)] += 1 }
        // Road inside each component (a segment whose two ends it holds, once whichever directions it allows):
        // the measure that does not change with where ways happen to be split.
        var componentMeters = [Double](repeating: 0, count: component.count)
        for segment in segments where component.labels[Int(segment.from)] == component.labels[Int(segment.to)] {
            componentMeters[Int(component.labels[Int(segment.from)])] += segment.lengthMeters
        }
        // The weakly connected whole each component belongs to, by union-find over the segments: a part that
        // holds enough road is kept only when it hangs off a network of at least the node threshold (a district
        // one-way streets cut off at an extract's edge), never when nothing joins it to anything.
        var parent = Array(0..<Int32(component.count))
        func root(_ label: Int32) -> Int32 {
            var label = label
            while parent[Int(label)] != label {
                parent[Int(label)] = parent[Int(parent[Int(label)])]; label = parent[Int(label)]
            }
            return label
        }
        for segment in segments {
            let a = root(component.labels[Int(segment.from)]), b = root(component.labels[Int(segment.to)])
            if a != b { parent[Int(max(a, b))] = min(a, b) }
        }
        var wholeSize = [Int](repeating: 0, count: component.count)
        for label in 0..<component.count { wholeSize[Int(root(Int32(label)))] += componentSize[label] }
        var isIsland = (0..<component.count).map {
            componentSize[$0] < minimumComponentSize
                && (componentMeters[$0] < minimumComponentMeters
                    || wholeSize[Int(root(Int32($0)))] < minimumComponentSize)
        }
        // The short one-way links between kept parts (each its own one-node component) stay too: a part kept is
        // no use if the way into it is dropped. Those are the parts reachable from a kept one that reach a kept one.
        var successors = [[Int32]](repeating: [], count: component.count)
        var predecessors = [[Int32]](repeating: [], count: component.count)
        for (from, to) in zip(pendingFrom, pendingTo) {
            let a = component.labels[Int(from)], b = component.labels[Int(to)]
            if a != b { successors[Int(a)].append(b); predecessors[Int(b)].append(a) }
        }
        func reached(along next: [[Int32]]) -> [Bool] {
            var seen = isIsland.map { !$0 }
            var queue = (0..<component.count).filter { seen[$0] }.map(Int32.init)
            while let label = queue.popLast() {
                for other in next[Int(label)] where !seen[Int(other)] { seen[Int(other)] = true; queue.append(other) }
            }
            return seen
        }
        let fromKept = reached(along: successors), toKept = reached(along: predecessors)
        for label in 0..<component.count where isIsland[label] && fromKept[label] && toKept[label] {
            isIsland[label] = false
        }
        report.islandsRemoved = isIsland.filter { $0 }.count
        let keep = component.labels.map { !isIsland[Int($0)] }
        report.islandNodesRemoved = keep.filter { !$0 }.count
        progress(
            "islands: \(report.islandsRemoved) removed (under \(minimumComponentSize) nodes, and under "
                + "\(Int(minimumComponentMeters)) m of road or joined to nothing)"
        )

        // The network.
        var network = RoadNetwork(
            turnCosts: TurnCosts(uTurnSeconds: profile.uTurnSeconds) { profile.turnCost(angleDegrees: $0) })
        var finalNode = [Int32](repeating: -1, count: graphNodeDense.count)
        for node in graphNodeDense.indices where keep[node] {
            let dense = Int(graphNodeDense[node])
            let delay = graphNodeIsBarrierCopy[node] ? 0 : delays[dense]
            if delay > 0 { report.delayNodes += 1 }
            finalNode[node] = network.addNode(
                id: osmIDs[dense], lat: lats[dense], lon: lons[dense], delaySeconds: delay)
        }
        let classRaw = Dictionary(uniqueKeysWithValues: RoadClass.allCases.map { ($0, rawValue(of: $0)) })
        var edgeWayIDs: [Int64] = []
        var edgeSegment: [Int32] = []
        for pending in pendingFrom.indices {
            let from = finalNode[Int(pendingFrom[pending])], to = finalNode[Int(pendingTo[pending])]
            guard from >= 0, to >= 0 else { report.islandEdgesRemoved += 1; continue }
            let segment = segments[Int(pendingSegment[pending])]
            let way = ways[Int(segment.way)]
            let forward = pendingForward[pending]
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
            edgeSegment.append(pendingSegment[pending])
        }

        // Turn restrictions with a via node.
        var arrivals = [[Int32]](repeating: [], count: network.nodeCount)
        var departures = [[Int32]](repeating: [], count: network.nodeCount)
        for edge in 0..<network.edgeCount {
            arrivals[Int(network.edgeTo[edge])].append(Int32(edge))
            departures[Int(network.edgeFrom[edge])].append(Int32(edge))
        }
        func skip(_ reason: String) { report.restrictionsSkipped[reason, default: 0] += 1 }
        let usedWayIDs = Set(ways.map(\.id))
        for relation in restrictionRelations {
            let members = relation.members.map { member in
                CarProfile.Member(
                    member.type == .node ? .node : member.type == .way ? .way : .relation, member.ref, role: member.role
                )
            }
            let restriction: CarProfile.Restriction
            switch profile.restriction(relation.tags, members: members) {
            case .failure(let rejection): skip(Self.reason(rejection)); continue
            case .success(let parsed): restriction = parsed
            }
            guard case .node(let viaID) = restriction.via else { skip("via way"); continue }
            guard let dense = denseOf[viaID] else { skip("via node not on a car way"); continue }
            if blocks[Int(dense)] { skip("via node is a blocking barrier"); continue }
            let graph = graphNodeOfDense[Int(dense)]
            guard graph >= 0, finalNode[Int(graph)] >= 0 else { skip("via node not in the network"); continue }
            let via = finalNode[Int(graph)]
            let fromWays = Set(restriction.from), toWays = Set(restriction.to)
            let arriving = arrivals[Int(via)].filter { fromWays.contains(edgeWayIDs[Int($0)]) }
            let leaving = departures[Int(via)].filter { toWays.contains(edgeWayIDs[Int($0)]) }
            guard !arriving.isEmpty else { skip("from way does not reach the via node"); continue }
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
                report.restrictionsApplied += 1
                report.restrictionPairs += pairs
                continue
            }
            guard !leaving.isEmpty else { skip("to way does not leave the via node"); continue }
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
            guard pairs > 0 else { skip("no matching turn at the via node"); continue }
            report.restrictionsApplied += 1
            report.restrictionPairs += pairs
        }

        report.nodes = network.nodeCount
        report.edges = network.edgeCount
        report.buildTime = start.duration(to: now())
        progress(
            "network: \(network.nodeCount) nodes, \(network.edgeCount) edges, \(report.restrictionsApplied) "
                + "restrictions"
        )
        return Built(network: network, report: report, edgeWayIDs: edgeWayIDs)
    }

    /// A short reason for the report's skipped-restriction counts.
    static func reason(_ rejection: CarProfile.RestrictionRejection) -> String {
        switch rejection {
        case .notARestriction: "not a restriction"
        case .notForCars: "not for cars"
        case .conditionalOnly: "conditional only"
        case .unknownValue: "unknown value"
        case .missingFrom, .missingTo, .ambiguous, .missingVia, .badVia, .wrongMemberKind: "malformed members"
        }
    }

    /// Great-circle length of a polyline in metres (haversine, mean Earth radius).
    static func length(of points: [RoadCoordinate]) -> Double {
        var total = 0.0
        let radians = Double.pi / 180
        for (a, b) in zip(points, points.dropFirst()) {
            let dLat = (b.lat - a.lat) * radians, dLon = (b.lon - a.lon) * radians
            let h =
                sin(dLat / 2) * sin(dLat / 2) + cos(a.lat * radians) * cos(b.lat * radians) * sin(dLon / 2)
                * sin(dLon / 2)
            total += 2 * 6_371_008.8 * asin(min(1, h.squareRoot()))
        }
        return total
    }
}
