import EnRouteRoads
import Foundation
import Routing
import Testing
@testable import enroute

/// `--time-zone`, `--live-speeds` and `--speed-table`: a bad value is a usage error naming what to fix.
@Suite struct ServeSpeedOptionsTests {
    /// A one-road town, enough for live speeds to attach to.
    static let roads: LocalRoadRouting = {
        var network = RoadNetwork()
        let a = network.addNode(id: 1, lat: 60.17, lon: 24.94), b = network.addNode(id: 2, lat: 60.171, lon: 24.94)
        network.addEdge(from: a, to: b, durationSeconds: 10)
        network.addEdge(from: b, to: a, durationSeconds: 10)
        return LocalRoadRouting(graph: .init(network: network))
    }()

    func speeds(
        _ args: [String], environment: [String: String] = [:], roads: LocalRoadRouting? = roads
    ) throws -> LiveRoadSpeeds? {
        let options = try ServeCommand.spec.parse(args, environment: environment)
        return try ServeCommand.liveSpeeds(options, roads: roads, timeZone: try ServeCommand.timeZone(options))
    }

    @Test func aTimeZoneMustBeAnIANAName() {
        #expect(
            throws: CLIError("--time-zone must be an IANA time zone such as Europe/Helsinki or UTC, got 'Helsinki'")
        ) {
            _ = try speeds(["--time-zone", "Helsinki"])
        }
        #expect(
            throws: CLIError("ENROUTE_TIME_ZONE must be an IANA time zone such as Europe/Helsinki or UTC, got 'EET+2'")
        ) {
            _ = try speeds([], environment: ["ENROUTE_TIME_ZONE": "EET+2"])
        }
    }

    @Test func liveSpeedsAreOnOrOff() throws {
        #expect(throws: CLIError("--live-speeds must be on or off, got 'yes'")) {
            _ = try speeds(["--live-speeds", "yes"])
        }
        #expect(try speeds(["--live-speeds", "off"]) == nil)
        let live = try #require(try speeds(["--time-zone", "Europe/Helsinki"]))
        #expect(live.options.timeZone.identifier == "Europe/Helsinki")
    }

    @Test func liveSpeedsAskedForWithoutEnRoutesGraphIsAnError() {
        #expect(
            throws: CLIError(
                "live speeds need EnRoute's own graph (--router graph --graph FILE); an external router keeps its own")
        ) {
            _ = try speeds(["--live-speeds", "on"], roads: nil)
        }
    }

    @Test func aMalformedSpeedTableNamesTheFileLineAndColumn() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("speeds-\(UUID().uuidString).txt")
        try "enroute-speeds 1\nprimary mon-fri 1 1 1\n".write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        do {
            _ = try speeds(["--speed-table", file.path])
            Issue.record("a malformed table was accepted")
        } catch let error as CLIError {
            #expect(error.description.hasPrefix("--speed-table: \(file.path): line 2, column"))
        }
        #expect(throws: CLIError.self) { _ = try speeds(["--speed-table", "/no/such/speeds.txt"]) }
    }
}
