import Foundation
import Testing
import HTTPTransport
import CurlTransport

@Suite struct CurlHTTPClientTests {
    @Test func reusesTheConnectionAcrossRequests() async throws {
        let client = CurlHTTPClient()
        let url = try await FixtureServer.url("json")
        var ports: Set<String> = []
        for _ in 0..<5 {
            let response = try await client.send(HTTPClientRequest(url: url))
            ports.insert(try #require(response.header("X-Client-Port")))
        }
        #expect(ports.count == 1)
    }

    @Test func runsManyRequestsAtOnceOnOneThread() async throws {
        let client = CurlHTTPClient()
        let url = try await FixtureServer.url("json")
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<40 { group.addTask { try await client.send(HTTPClientRequest(url: url)).status } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(statuses == Array(repeating: 200, count: 40))
    }

    @Test func aRefusedConnectionIsANetworkError() async throws {
        let client = CurlHTTPClient()
        // Port 9 (discard) is closed on loopback here; the error must come back, not hang.
        await #expect {
            try await client.send(HTTPClientRequest(url: URL(string: "http://127.0.0.1:9/")!, timeout: .seconds(2)))
        } throws: { error in
            if case HTTPClientError.network = error { true } else { false }
        }
    }
}
