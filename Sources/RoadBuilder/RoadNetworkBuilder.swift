import Foundation
import OSMPBF
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
    struct UsedWay {
        var id: Int64
        var refs: [Int32]
        var attributes: WayAttributes
    }

    /// A piece of a way between two graph nodes.
    struct Segment {
        var way: Int32
        var from: Int32
        var to: Int32
        var points: [RoadCoordinate]
        var lengthMeters: Double
    }

    /// The build from an open reader, pass by pass: ways, nodes, segments, islands, the network, its restrictions.
    static func build(
        reader: OSMReader, profile: CarProfile, minimumComponentSize: Int,
        minimumComponentMeters: Double = defaultMinimumComponentMeters, now: () -> ContinuousClock.Instant,
        progress: (String) -> Void
    ) throws -> Built {
        let start = now()
        var report = BuildReport()
        let read = try readWays(reader, profile: profile, report: &report)
        progress("ways: \(read.ways.count) car ways of \(report.waysRead), \(read.osmIDs.count) nodes referenced")
        let nodes = try readNodes(reader, referencedBy: read, profile: profile, report: &report)
        progress("nodes: \(report.nodesRead) read")

        var splitter = WaySplitter(nodes: nodes, useCount: read.useCount)
        splitter.split(read.ways, report: &report)
        progress("segments: \(splitter.segments.count) between \(splitter.graphNodeDense.count) graph nodes")

        let edges = PendingEdges(segments: splitter.segments, ways: read.ways)
        let keep = keptNodes(
            nodeCount: splitter.graphNodeDense.count, segments: splitter.segments, edges: edges,
            minimumComponentSize: minimumComponentSize, minimumComponentMeters: minimumComponentMeters,
            report: &report)
        progress(
            "islands: \(report.islandsRemoved) removed (under \(minimumComponentSize) nodes, and under "
                + "\(Int(minimumComponentMeters)) m of road or joined to nothing)"
        )

        var assembled = assemble(
            profile: profile, read: read, nodes: nodes, splitter: splitter, edges: edges, keep: keep, report: &report)
        let restrictions = RestrictionMapper(read: read, nodes: nodes, splitter: splitter, assembled: assembled)
        restrictions.apply(read.restrictionRelations, profile: profile, to: &assembled.network, report: &report)

        report.nodes = assembled.network.nodeCount
        report.edges = assembled.network.edgeCount
        report.buildTime = start.duration(to: now())
        progress(
            "network: \(assembled.network.nodeCount) nodes, \(assembled.network.edgeCount) edges, "
                + "\(report.restrictionsApplied) restrictions"
        )
        return Built(network: assembled.network, report: report, edgeWayIDs: assembled.edgeWayIDs)
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
