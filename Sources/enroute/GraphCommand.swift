import Foundation
import RoadBuilder
import Routing

/// `enroute graph build`: reads an OSM PBF file, builds the car road network from it and writes the graph file.
enum GraphCommand {
    static let spec = CommandSpec(
        name: "graph",
        synopsis: """
            Usage: enroute graph build --osm FILE.osm.pbf --out FILE.graph [--min-component-size N]

            Builds the car road network from an OpenStreetMap PBF extract: car ways by the car profile, split at
            junctions into directed edges, turn restrictions, small disconnected islands removed; then the edge-based
            turn graph and its contraction hierarchy, stored in the file so the server starts without contracting.
            Prints a progress line per phase and the build report, then writes the binary graph file (atomically: a
            temporary file renamed into place) that `enroute serve --graph FILE.graph` loads.
            """,
        sections: [
            (
                nil,
                [
                    .value("osm", "FILE", "The OSM PBF extract to read (FILE.osm.pbf)."),
                    .value("out", "FILE", "Where the graph file goes (replaced if it exists)."),
                    .value(
                        "min-component-size", "N",
                        "Drop strongly connected parts smaller than N nodes (default "
                            + "\(RoadNetworkBuilder.defaultMinimumComponentSize)),"
                            + " unless they hold --min-component-meters of road."),
                    .value(
                        "min-component-meters", "M",
                        "Keep a strongly connected part holding at least M metres of road whatever its node count"
                            + " (default \(Int(RoadNetworkBuilder.defaultMinimumComponentMeters)))."),
                ]
            )
        ], positionals: 1)

    /// A file the command cannot use, named with what is wrong with it.
    struct InputError: Error, CustomStringConvertible, Equatable {
        let description: String
    }

    static func run(
        _ args: [String], print: (String) -> Void = { Swift.print($0) },
        progress: (String) -> Void = { FileHandle.standardError.write(Data("graph build: \($0)\n".utf8)) }
    ) throws -> Int32 {
        let options = try spec.parse(args)
        if options.has("help") { print(spec.helpText); return 0 }
        guard let action = options.positional.first else {
            throw CLIError("missing subcommand: enroute graph build (see `enroute graph --help`)")
        }
        guard action == "build" else { throw CLIError("unknown graph subcommand '\(action)' (known: build)") }
        guard let osm = options.string("osm"), !osm.isEmpty else {
            throw CLIError("--osm is required (see `enroute graph --help`)")
        }
        guard let out = options.string("out"), !out.isEmpty else {
            throw CLIError("--out is required (see `enroute graph --help`)")
        }
        let minimum =
            try options.int("min-component-size", in: 1...1_000_000) ?? RoadNetworkBuilder.defaultMinimumComponentSize
        let minimumMeters =
            try options.int("min-component-meters", in: 0...10_000_000).map(Double.init)
            ?? RoadNetworkBuilder.defaultMinimumComponentMeters
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: osm, isDirectory: &isDirectory), !isDirectory.boolValue else {
            throw InputError(description: "no such file: \(osm)")
        }
        let network: RoadNetwork, report: BuildReport
        do {
            (network, report) = try RoadNetworkBuilder.build(
                osm: osm, minimumComponentSize: minimum,
                minimumComponentMeters: minimumMeters, progress: progress)
        } catch {
            throw InputError(description: "\(osm) is not a readable OSM PBF file: \(error)")
        }
        print(report.summary)
        let clock = ContinuousClock()
        progress("building the turn graph")
        var graph: EdgeBasedGraph!
        let graphTime = clock.measure { graph = EdgeBasedGraph(network: network) }
        progress("turn graph: \(graph.nodeCount) road edges, \(graph.arcCount) turns in \(format(graphTime))")
        progress("contracting the hierarchy")
        var hierarchy: ContractionHierarchy!
        let contractTime = clock.measure { hierarchy = ContractionHierarchy(graph: graph) }
        progress("hierarchy: \(hierarchy.shortcutCount) shortcuts in \(format(contractTime))")
        progress("writing \(out)")
        let metadata = RoadGraphFile.Metadata(build: [
            "builder": "enroute graph build", "source": URL(fileURLWithPath: osm).lastPathComponent,
            "min-component-size": String(minimum),
        ])
        do {
            try RoadGraphFile.write(network, metadata: metadata, routing: (graph, hierarchy), to: out)
        } catch {
            throw InputError(description: "cannot write the graph file: \(error)")
        }
        let size = (try? FileManager.default.attributesOfItem(atPath: out)[.size] as? Int) ?? 0
        print("graph file: \(out), \(size) bytes (\(String(format: "%.1f", Double(size) / 1_048_576)) MiB)")
        return 0
    }

    private static func format(_ duration: Duration) -> String {
        let parts = duration.components
        return String(format: "%.2f s", Double(parts.seconds) + Double(parts.attoseconds) * 1e-18)
    }
}
