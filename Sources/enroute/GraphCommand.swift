import Foundation
import RoadBuilder

/// `enroute graph build`: reads an OSM PBF file and builds the car road network from it.
enum GraphCommand {
    static let spec = CommandSpec(name: "graph", synopsis: """
    Usage: enroute graph build --osm FILE.osm.pbf --out FILE.graph [--min-component-size N]

    Builds the car road network from an OpenStreetMap PBF extract: car ways by the car profile, split at
    junctions into directed edges, turn restrictions, small disconnected islands removed. Prints a progress
    line per phase and the build report. Writing the binary graph file is not implemented yet: the network
    is built and checked, and --out is not written.
    """, sections: [(nil, [
        .value("osm", "FILE", "The OSM PBF extract to read (FILE.osm.pbf)."),
        .value("out", "FILE", "Where the graph file goes (not written yet)."),
        .value("min-component-size", "N",
               "Drop strongly connected parts smaller than N nodes (default \(RoadNetworkBuilder.defaultMinimumComponentSize))."),
    ])], positionals: 1)

    /// A file the command cannot use, named with what is wrong with it.
    struct InputError: Error, CustomStringConvertible, Equatable {
        let description: String
    }

    static func run(_ args: [String], print: (String) -> Void = { Swift.print($0) },
                    progress: (String) -> Void = { FileHandle.standardError.write(Data("graph build: \($0)\n".utf8)) }) throws -> Int32 {
        let options = try spec.parse(args)
        if options.has("help") { print(spec.helpText); return 0 }
        guard let action = options.positional.first else { throw CLIError("missing subcommand: enroute graph build (see `enroute graph --help`)") }
        guard action == "build" else { throw CLIError("unknown graph subcommand '\(action)' (known: build)") }
        guard let osm = options.string("osm"), !osm.isEmpty else { throw CLIError("--osm is required (see `enroute graph --help`)") }
        guard let out = options.string("out"), !out.isEmpty else { throw CLIError("--out is required (see `enroute graph --help`)") }
        let minimum = try options.int("min-component-size", in: 1...1_000_000) ?? RoadNetworkBuilder.defaultMinimumComponentSize
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: osm, isDirectory: &isDirectory), !isDirectory.boolValue else {
            throw InputError(description: "no such file: \(osm)")
        }
        let report: BuildReport
        do {
            (_, report) = try RoadNetworkBuilder.build(osm: osm, minimumComponentSize: minimum, progress: progress)
        } catch {
            throw InputError(description: "\(osm) is not a readable OSM PBF file: \(error)")
        }
        print(report.summary)
        print("note: the graph file format is not implemented yet; \(out) was not written")
        return 0
    }
}
