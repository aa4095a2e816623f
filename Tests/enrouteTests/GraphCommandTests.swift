import Foundation
import Testing
@testable import enroute
import Routing

/// `enroute graph build`: builds the road network from a PBF file, prints its report and writes the graph file;
/// `enroute serve --graph` loads that file or refuses to start.
@Suite struct GraphCommandTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let kotka = root.appendingPathComponent("data/osm/kotka-clean.osm.pbf").path

    @Test func buildingKotkaPrintsProgressAndTheReportAndWritesAFileReadAccepts() throws {
        var lines: [String] = [], progress: [String] = []
        let out = FileManager.default.temporaryDirectory.appendingPathComponent(
            "enroute-graph-\(UUID().uuidString).graph"
        ).path
        defer { try? FileManager.default.removeItem(atPath: out) }
        let code = try GraphCommand.run(
            ["build", "--osm", Self.kotka, "--out", out],
            print: { lines.append($0) }, progress: { progress.append($0) })
        #expect(code == 0)
        #expect(progress.contains { $0.hasPrefix("ways: ") } && progress.contains { $0.hasPrefix("network: ") })
        #expect(progress.last == "writing \(out)")
        let report = lines.joined(separator: "\n")
        #expect(
            report.contains("directed edges") && report.contains("islands removed") && report.contains("build time"))
        let size = try #require(FileManager.default.attributesOfItem(atPath: out)[.size] as? Int)
        #expect(lines.last?.hasPrefix("graph file: \(out), \(size) bytes (") == true)
        let contents = try RoadGraphFile.readContents(out)
        #expect(contents.network.edgeCount > 100 && report.contains("\(contents.network.edgeCount) directed edges"))
        #expect(contents.metadata.build["source"] == "kotka-clean.osm.pbf" && contents.metadata.profileName == "car")
        // The turn graph and hierarchy are stored, each phase with a progress line, so serve need not contract.
        #expect(progress.contains { $0.hasPrefix("turn graph: ") } && progress.contains { $0.hasPrefix("hierarchy: ") })
        let hierarchy = try #require(contents.hierarchy)
        #expect(contents.graph?.nodeCount == contents.network.edgeCount && hierarchy.shortcutCount > 0)
    }

    @Test func serveRefusesAMissingOrDamagedGraphFileBeforeOpeningTheDatabase() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "enroute-serve-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let database = directory.appendingPathComponent("enroute.sqlite").path
        let missing = directory.appendingPathComponent("missing.graph").path
        #expect(await CommandLineTool.run(["serve", "--graph", missing, "--db", database, "--port", "0"]) == 1)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
        #expect(
            throws: ServeCommand.GraphError(
                description: "cannot load the graph file given by --graph: \(missing): no such file")
        ) {
            try ServeCommand.loadGraph(try ServeCommand.spec.parse(["--graph", missing], environment: [:]))
        }
        let damaged = directory.appendingPathComponent("damaged.graph")
        var network = RoadNetwork()
        network.addEdge(
            from: network.addNode(id: 1, lat: 60.4, lon: 26.9), to: network.addNode(id: 2, lat: 60.5, lon: 26.9),
            durationSeconds: 9)
        var bytes = RoadGraphFile.encode(network)
        bytes[bytes.count - 1] ^= 0xFF  // the last section, the restrictions, ends the file
        try Data(bytes).write(to: damaged)
        #expect(
            throws: ServeCommand.GraphError(
                description:
                    "cannot load the graph file given by ENROUTE_GRAPH: checksum mismatch in restrictions: the file "
                    + "is corrupted"
            )
        ) {
            try ServeCommand.loadGraph(try ServeCommand.spec.parse([], environment: ["ENROUTE_GRAPH": damaged.path]))
        }
        #expect(try ServeCommand.loadGraph(try ServeCommand.spec.parse([], environment: [:])) == nil)
        #expect(ServeCommand.spec.helpText.contains("--graph FILE"))
    }

    @Test func unknownFlagsAndMissingArgumentsAreUsageErrors() async {
        #expect(await CommandLineTool.run(["graph", "build", "--osm", Self.kotka, "--out", "x.graph", "--fast"]) == 64)
        #expect(await CommandLineTool.run(["graph", "build", "--out", "x.graph"]) == 64)
        #expect(await CommandLineTool.run(["graph", "build", "--osm", Self.kotka]) == 64)
        #expect(await CommandLineTool.run(["graph", "--osm", Self.kotka, "--out", "x.graph"]) == 64)
        #expect(await CommandLineTool.run(["graph", "draw", "--osm", Self.kotka, "--out", "x.graph"]) == 64)
        #expect(
            await CommandLineTool.run([
                "graph", "build", "--osm", Self.kotka, "--out", "x.graph", "--min-component-size", "zero",
            ]) == 64)
    }

    @Test func aMissingOrMalformedFileIsAClearError() async throws {
        #expect(
            await CommandLineTool.run(["graph", "build", "--osm", "/nonexistent/nowhere.osm.pbf", "--out", "x.graph"])
                == 1)
        #expect(throws: GraphCommand.InputError.self) {
            try GraphCommand.run(
                ["build", "--osm", "/nonexistent/nowhere.osm.pbf", "--out", "x.graph"], print: { _ in },
                progress: { _ in })
        }
        let junk = FileManager.default.temporaryDirectory.appendingPathComponent(
            "enroute-junk-\(UUID().uuidString).osm.pbf")
        try Data("this is not a PBF file at all".utf8).write(to: junk)
        defer { try? FileManager.default.removeItem(at: junk) }
        do {
            _ = try GraphCommand.run(
                ["build", "--osm", junk.path, "--out", "x.graph"], print: { _ in }, progress: { _ in })
            Issue.record("a junk file was accepted")
        } catch let error as GraphCommand.InputError {
            #expect(error.description.hasPrefix("\(junk.path) is not a readable OSM PBF file: "))
        }
        #expect(throws: GraphCommand.InputError(description: "no such file: /nonexistent/nowhere.osm.pbf")) {
            try GraphCommand.run(
                ["build", "--osm", "/nonexistent/nowhere.osm.pbf", "--out", "x.graph"], print: { _ in },
                progress: { _ in })
        }
    }
}
