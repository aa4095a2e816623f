import Foundation
import Testing
@testable import enroute

/// `enroute graph build`: builds the road network from a PBF file and prints its report.
@Suite struct GraphCommandTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let kotka = root.appendingPathComponent("data/osm/kotka-clean.osm.pbf").path

    @Test func buildingKotkaPrintsProgressAndTheReport() throws {
        var lines: [String] = [], progress: [String] = []
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("enroute-graph-\(UUID().uuidString).graph").path
        let code = try GraphCommand.run(["build", "--osm", Self.kotka, "--out", out],
                                        print: { lines.append($0) }, progress: { progress.append($0) })
        #expect(code == 0)
        #expect(progress.contains { $0.hasPrefix("ways: ") } && progress.contains { $0.hasPrefix("network: ") })
        let report = lines.joined(separator: "\n")
        #expect(report.contains("directed edges") && report.contains("islands removed") && report.contains("build time"))
        // The file format is not there yet, and the command says so rather than pretending.
        #expect(report.contains("was not written"))
        #expect(!FileManager.default.fileExists(atPath: out))
    }

    @Test func unknownFlagsAndMissingArgumentsAreUsageErrors() async {
        #expect(await CommandLineTool.run(["graph", "build", "--osm", Self.kotka, "--out", "x.graph", "--fast"]) == 64)
        #expect(await CommandLineTool.run(["graph", "build", "--out", "x.graph"]) == 64)
        #expect(await CommandLineTool.run(["graph", "build", "--osm", Self.kotka]) == 64)
        #expect(await CommandLineTool.run(["graph", "--osm", Self.kotka, "--out", "x.graph"]) == 64)
        #expect(await CommandLineTool.run(["graph", "draw", "--osm", Self.kotka, "--out", "x.graph"]) == 64)
        #expect(await CommandLineTool.run(["graph", "build", "--osm", Self.kotka, "--out", "x.graph", "--min-component-size", "zero"]) == 64)
    }

    @Test func aMissingOrMalformedFileIsAClearError() async throws {
        #expect(await CommandLineTool.run(["graph", "build", "--osm", "/nonexistent/nowhere.osm.pbf", "--out", "x.graph"]) == 1)
        #expect(throws: GraphCommand.InputError.self) {
            try GraphCommand.run(["build", "--osm", "/nonexistent/nowhere.osm.pbf", "--out", "x.graph"], print: { _ in }, progress: { _ in })
        }
        let junk = FileManager.default.temporaryDirectory.appendingPathComponent("enroute-junk-\(UUID().uuidString).osm.pbf")
        try Data("this is not a PBF file at all".utf8).write(to: junk)
        defer { try? FileManager.default.removeItem(at: junk) }
        do {
            _ = try GraphCommand.run(["build", "--osm", junk.path, "--out", "x.graph"], print: { _ in }, progress: { _ in })
            Issue.record("a junk file was accepted")
        } catch let error as GraphCommand.InputError {
            #expect(error.description.hasPrefix("\(junk.path) is not a readable OSM PBF file: "))
        }
        #expect(throws: GraphCommand.InputError(description: "no such file: /nonexistent/nowhere.osm.pbf")) {
            try GraphCommand.run(["build", "--osm", "/nonexistent/nowhere.osm.pbf", "--out", "x.graph"], print: { _ in }, progress: { _ in })
        }
    }
}
