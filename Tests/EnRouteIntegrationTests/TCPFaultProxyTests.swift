import Testing
import HTTPEngine
import TestSupport

/// The fault proxy in front of a live HTTP server, without Redis: forwarding, a cut, a blackhole, the restores.
@Suite struct TCPFaultProxyTests {
    private func makeSUT() throws -> (server: HTTPServer, proxy: TCPFaultProxy) {
        var router = Router()
        router.get("/ping") { _ in .text("pong") }
        var configuration = HTTPServerConfiguration()
        configuration.port = 0
        let server = HTTPServer(router: router, configuration: configuration)
        try server.start()
        return (server, try TCPFaultProxy(forwardingTo: Int(server.port)))
    }

    private func ping(_ client: TCPTestClient) async throws -> Int {
        client.write("GET /ping HTTP/1.1\r\nHost: x\r\n\r\n")
        return try await client.readResponse().status
    }

    @Test func aCutDropsEveryConnectionAndRefusesNewOnesUntilTheRestore() async throws {
        let (server, proxy) = try makeSUT()
        let client = try TCPTestClient(port: proxy.port)
        #expect(try await ping(client) == 200)
        #expect(proxy.openConnections == 1)

        try await proxy.cut()
        #expect(proxy.mode == .cut)
        try await client.readUntilClosed()
        #expect(client.closedByPeer)
        #expect(throws: TCPTestClient.Failure.self) { _ = try TCPTestClient(port: proxy.port) }

        try await proxy.restore()
        #expect(try await ping(try TCPTestClient(port: proxy.port)) == 200)
        #expect(proxy.acceptedConnections == 2)
        try await proxy.stop()
        await server.shutdown()
    }

    /// A blackhole holds what is sent; once restored it flows on and the answer comes back.
    @Test func aBlackholeHoldsTrafficThatFlowsOnAfterTheRestore() async throws {
        let (server, proxy) = try makeSUT()
        try await proxy.blackhole()
        let client = try TCPTestClient(port: proxy.port)
        client.write("GET /ping HTTP/1.1\r\nHost: x\r\n\r\n")
        try await eventually("the proxy holds the connection", within: .seconds(10)) { proxy.openConnections == 1 }
        #expect(client.received.isEmpty)

        try await proxy.restore()
        #expect(try await client.readResponse().status == 200)
        try await proxy.stop()
        await server.shutdown()
    }

    @Test func aStoppedProxyRefusesControl() async throws {
        let (server, proxy) = try makeSUT()
        try await proxy.stop()
        await #expect(throws: TCPFaultProxy.Failure.self) { try await proxy.cut() }
        // (Not whether its port now refuses connections: beside the other suites, another test's listener may take it.)
        await server.shutdown()
    }
}
