import HTTPTransport
import Foundation
import Testing
@testable import enroute

/// `--router` and `--osrm-url`: a bad combination is a usage error naming what to fix, before anything starts.
@Suite struct ServeRouterOptionsTests {
    func load(_ args: [String], environment: [String: String] = [:]) throws -> Bool {
        let options = try ServeCommand.spec.parse(args, environment: environment)
        return try ServeCommand.loadRoads(
            options, makeClient: { fatalError("no client is made for a refused configuration") }) != nil
    }

    @Test(arguments: [
        (["--router", "valhalla"], "--router must be graph or osrm, got 'valhalla'"),
        (
            ["--router", "osrm"],
            "--router osrm needs --osrm-url URL, the OSRM server's base URL such as http://127.0.0.1:5000"
        ),
        (
            ["--router", "osrm", "--osrm-url", "ftp://x"],
            "--osrm-url must be an http(s) base URL such as http://127.0.0.1:5000, got 'ftp://x'"
        ),
        (
            ["--router", "osrm", "--osrm-url", "http://127.0.0.1:5000", "--graph", "g.graph"],
            "--graph is for --router graph; with --router osrm the roads are OSRM's"
        ),
        (["--router", "graph"], "--router graph needs --graph FILE (from `enroute graph build`)"),
        (["--osrm-url", "http://127.0.0.1:5000"], "--osrm-url is for --router osrm, not --router graph"),
    ])
    func aBadRouterConfigurationIsAUsageError(args: [String], message: String) {
        #expect(throws: CLIError(message)) { _ = try load(args) }
    }

    @Test func theRouterCanComeFromTheEnvironment() {
        #expect(throws: CLIError("ENROUTE_ROUTER must be graph or osrm, got 'x'")) {
            _ = try load([], environment: ["ENROUTE_ROUTER": "x"])
        }
    }

    @Test func noRouterAndNoGraphMeansNoRoads() throws {
        #expect(try load([]) == false)
    }

    @Test func osrmWithAURLMakesRoadsWithoutContactingIt() async throws {
        let options = try ServeCommand.spec.parse(
            ["--router", "osrm", "--osrm-url", "http://127.0.0.1:5000"], environment: [:])
        #expect(try ServeCommand.loadRoads(options, makeClient: { UnusedClient() }) != nil)
    }
}

/// A transport that a configuration test must not use.
private struct UnusedClient: HTTPClient {
    func send(_ request: HTTPClientRequest) async throws -> HTTPClientResponse {
        Issue.record("unexpected request"); throw HTTPClientError.network("unused")
    }
    func events(_ request: HTTPClientRequest) -> AsyncThrowingStream<ServerSentEvent, any Error> {
        AsyncThrowingStream { $0.finish() }
    }
}
