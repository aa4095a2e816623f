import Foundation
import Testing
import Synchronization
import EnRouteModels
import TestSupport
@testable import HTTPEngine

/// Live-socket tests of what a hostile or broken client meets: protocol errors answered as problems,
/// exact paths, Host, receive deadlines, the connection cap under a slowloris, and request deadlines.
@Suite(.serialized) struct HTTPServerHardeningTests {
    final class Probe: Sendable {
        let cancelled = AsyncStream<Void>.makeStream()
    }

    func makeSUT(
        _ configure: (inout HTTPServerConfiguration) -> Void = { _ in }, clock: ManualClock = ManualClock(),
        probe: Probe = Probe(), descriptorLimit: Int = DescriptorLimit.current,
        accept: @escaping @Sendable (Int32) -> Int32 = EventLoop.systemAccept
    ) throws -> HTTPServer {
        var router = Router()
        router.get("/json") { _ in .jsonBytes(Array(#"{"ok":true}"#.utf8)) }
        router.get("/items/{id}") { req in .text("item \(try req.parameter("id"))") }
        router.post("/upload", bodyLimit: 1024) { req in .text("got \(req.body.count)") }
        router.get("/slow") { _ in
            // A dependency that never answers: only cancellation ends it.
            await withTaskCancellationHandler {
                let (never, _) = AsyncStream<Void>.makeStream()
                for await _ in never {}
            } onCancel: {
                probe.cancelled.continuation.yield()
            }
            return .text("too late")
        }
        router.get("/events") { _ in
            .eventStream { writer in
                try writer.send(event: "hello", id: "1", data: "first")
                let (never, _) = AsyncStream<Void>.makeStream()
                for await _ in never {}
            }
        }
        var config = HTTPServerConfiguration()
        config.port = 0
        config.threads = 2
        configure(&config)
        let server = HTTPServer(
            router: router, configuration: config, metrics: MetricsRegistry(), clock: clock,
            wallClock: { Date() }, descriptorLimit: descriptorLimit, accept: accept)
        try server.start()
        return server
    }

    func expectProblem(
        _ response: (status: Int, headers: [String: String], body: [UInt8]), status: Int,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        #expect(response.status == status, sourceLocation: sourceLocation)
        #expect(response.headers["content-type"] == "application/problem+json", sourceLocation: sourceLocation)
        let problem = try JSONDecoder().decode(Problem.self, from: Data(response.body))
        #expect(problem.status == status, sourceLocation: sourceLocation)
    }

    // MARK: - Errors the parser finds are problems too

    static let headerFlood = (0..<150).map { "X-Filler-\($0): \(String(repeating: "v", count: 60))\r\n" }.joined()

    @Test(
        arguments: [
            ("GET /" + String(repeating: "a", count: 100_000) + " HTTP/1.1\r\nHost: x\r\n\r\n", 414),
            ("GET /json HTTP/1.1\r\nHost: x\r\n" + headerFlood + "\r\n", 431),
            ("GET /json HTTP/1.1 trailing-garbage\r\nHost: x\r\n\r\n", 400),
            ("POST /upload HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 400),
            ("GET /json HTTP/2.0\r\nHost: x\r\n\r\n", 505),
        ] as [(String, Int)])
    func requestsTheEngineCannotParseGetAProblemDocument(request: String, status: Int) async throws {
        let server = try makeSUT()
        let client = try TCPTestClient(port: server.port)
        client.write(request)
        try expectProblem(try await client.readResponse(), status: status)
        await server.shutdown()
    }

    /// A malformed Content-Length is answered once, as a problem, and the connection closed.
    @Test func aMalformedContentLengthIs400AsAProblem() async throws {
        let server = try makeSUT()
        let client = try TCPTestClient(port: server.port)
        client.write("GET /json HTTP/1.1\r\nHost: x\r\nContent-Length: 12abc\r\n\r\n")
        try expectProblem(try await client.readResponse(), status: 400)
        try await client.readUntilClosed()
        #expect(client.closedByPeer)
        #expect(client.received.isEmpty, "one answer, nothing after it")
        await server.shutdown()
    }

    /// A body far over the limit is read and thrown away, so the client still gets its 413.
    @Test func aTenMegabyteChunkedBodyIs413NotAReset() async throws {
        let server = try makeSUT()
        let client = try TCPTestClient(port: server.port)
        client.write(
            "POST /upload HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
        let chunk = Array("10000\r\n".utf8) + [UInt8](repeating: 0x61, count: 0x10000) + Array("\r\n".utf8)
        for _ in 0..<160 { #expect(client.write(chunk)) }  // 10 MiB
        client.write("0\r\n\r\n")
        try expectProblem(try await client.readResponse(), status: 413)
        await server.shutdown()
    }

    // MARK: - Exact paths and Host

    @Test(arguments: ["/items/42%00junk", "//items//42", "/items/42/", "/items//42", "/json/", "/items/42%zz"])
    func pathsThatAreNotExactlyARouteAre404(path: String) async throws {
        let server = try makeSUT()
        let client = try TCPTestClient(port: server.port)
        client.write("GET \(path) HTTP/1.1\r\nHost: x\r\n\r\n")
        try expectProblem(try await client.readResponse(), status: 404)
        await server.shutdown()
    }

    @Test func percentEscapesInAPathAreDecodedForTheHandler() async throws {
        let server = try makeSUT()
        let client = try TCPTestClient(port: server.port)
        client.write("GET /items/a%20b?x=1 HTTP/1.1\r\nHost: x\r\n\r\n")
        let response = try await client.readResponse()
        #expect(response.status == 200)
        #expect(String(decoding: response.body, as: UTF8.self) == "item a b")
        await server.shutdown()
    }

    @Test func anHTTP11RequestWithoutHostIs400ButHTTP10NeedsNone() async throws {
        let server = try makeSUT()
        let client = try TCPTestClient(port: server.port)
        client.write("GET /json HTTP/1.1\r\n\r\n")
        try expectProblem(try await client.readResponse(), status: 400)

        let twice = try TCPTestClient(port: server.port)
        twice.write("GET /json HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n")
        try expectProblem(try await twice.readResponse(), status: 400)

        let old = try TCPTestClient(port: server.port)
        old.write("GET /json HTTP/1.0\r\n\r\n")
        #expect(try await old.readResponse().status == 200)
        await server.shutdown()
    }

    // MARK: - Receive deadlines (on the server's clock)

    @Test func aConnectionStuckInItsHeadersIsClosedAtTheHeaderDeadline() async throws {
        let clock = ManualClock()
        let server = try makeSUT({ $0.headerTimeout = .seconds(10) }, clock: clock)
        let client = try TCPTestClient(port: server.port)
        client.write("GET /json HTTP/1.1\r\nHo")
        try await eventually("the connection is seen", within: .seconds(30)) { server.connectionCount(in: .head) == 1 }
        await clock.advance(by: .seconds(9))
        #expect(server.connectionCount(in: .head) == 1, "still open before the deadline")
        client.write("s")  // a trickle does not move the deadline
        await clock.advance(by: .seconds(2))
        try await client.readUntilClosed()
        #expect(client.closedByPeer)
        #expect(server.metrics.counter("enroute_connections_cut_total", labels: ["reason": "deadline"]) == 1)
        await server.shutdown()
    }

    @Test func aBodyThatTricklesPastTheBodyDeadlineIsClosed() async throws {
        let clock = ManualClock()
        let server = try makeSUT({ $0.bodyTimeout = .seconds(30) }, clock: clock)
        let client = try TCPTestClient(port: server.port)
        client.write("POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n0123456789")
        try await eventually("the body is being received", within: .seconds(30)) {
            server.connectionCount(in: .body) == 1
        }
        await clock.advance(by: .seconds(29))
        #expect(server.connectionCount(in: .body) == 1, "still open before the deadline")
        await clock.advance(by: .seconds(2))
        try await client.readUntilClosed()
        #expect(client.closedByPeer)
        await server.shutdown()
    }

    /// A kept-alive connection gets the idle timeout from its last answer to send its next request
    /// line, however slowly it trickles in.
    @Test func aKeptAliveConnectionTricklingItsNextRequestIsClosedAtTheIdleTimeout() async throws {
        let clock = ManualClock()
        let server = try makeSUT({ $0.idleTimeoutSeconds = 30 }, clock: clock)
        let client = try TCPTestClient(port: server.port)
        client.write("GET /json HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try await client.readResponse().status == 200)
        try await eventually("the request is complete", within: .seconds(30)) {
            server.connectionCount(in: .awaitingRequest) == 1
        }
        for _ in 0..<29 {
            client.write("G")
            await clock.advance(by: .seconds(1))
        }
        #expect(server.connectionCount(in: .awaitingRequest) == 1)
        await clock.advance(by: .seconds(2))
        try await client.readUntilClosed()
        #expect(client.closedByPeer)
        await server.shutdown()
    }

    /// Many clients trickling their headers fill the cap; a healthy request still gets through, because
    /// a newcomer over the cap makes the connection that has waited longest for its head give way.
    @Test func slowHeaderClientsCannotStarveAHealthyRequest() async throws {
        let clock = ManualClock()
        let server = try makeSUT(
            {
                $0.connectionLimit = 20; $0.threads = 1
            }, clock: clock)
        var slow: [TCPTestClient] = []
        for i in 0..<40 {
            let client = try TCPTestClient(port: server.port)
            client.write("GET /json HTTP/1.1\r\nX-Slow-\(i): ")
            slow.append(client)
            try await eventually("slow client \(i) is seen", within: .seconds(30)) {
                server.connectionCount(in: .head) == min(i + 1, 20)
            }
        }
        for _ in 0..<5 {
            let probe = try TCPTestClient(port: server.port)
            probe.write("GET /json HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(try await probe.readResponse().status == 200)
        }
        // The oldest slow clients were the ones cut off.
        try await slow[0].readUntilClosed()
        #expect(slow[0].closedByPeer)
        #expect(server.openConnectionCount <= 20)
        #expect(server.metrics.counter("enroute_connections_cut_total", labels: ["reason": "evicted"]) >= 20)
        await server.shutdown()
    }

    // MARK: - HEAD

    /// HEAD on a stream answers the stream's head alone: no stream starts, and the request pipelined behind it is
    /// answered as well.
    @Test(arguments: ["HTTP/1.1", "HTTP/1.0"])
    func headOnAStreamAnswersItsHeadAloneAndThenThePipelinedRequest(version: String) async throws {
        let server = try makeSUT()
        let client = try TCPTestClient(port: server.port)
        let keepAlive = version == "HTTP/1.0" ? "Connection: keep-alive\r\n" : ""
        client.write("HEAD /events \(version)\r\nHost: x\r\n\(keepAlive)\r\nGET /json \(version)\r\nHost: x\r\n\r\n")
        try await client.read(untilContains: #"{"ok":true}"#)
        let text = client.text
        #expect(text.hasPrefix("HTTP/1.1 200") && text.contains("text/event-stream"))
        #expect(!text.contains("retry:") && !text.contains("data: first"), "no event-stream body")
        #expect(text.components(separatedBy: "HTTP/1.1 200").count == 3, "two answers")
        #expect(server.openStreamCount == 0)
        await server.shutdown()
    }

    // MARK: - Descriptors

    /// The cap comes from the descriptor limit, below it: with 8 descriptors the cap is 4 connections, and a newcomer
    /// beyond them (none of them waiting for a head, so nobody gives way) is told 503 as a problem, then closed.
    @Test func atACapTheDescriptorLimitSetsANewcomerGets503AsAProblem() async throws {
        let server = try makeSUT({ $0.threads = 1 }, descriptorLimit: 8)
        #expect(server.budget.connectionCap == 4)
        var streams: [TCPTestClient] = []
        for _ in 0..<4 {
            let client = try TCPTestClient(port: server.port)
            client.write("GET /events HTTP/1.1\r\nHost: x\r\n\r\n")
            try await client.read(untilContains: "data: first")
            streams.append(client)
        }
        let newcomer = try TCPTestClient(port: server.port)
        newcomer.write("GET /json HTTP/1.1\r\nHost: x\r\n\r\n")
        let refused = try await newcomer.readResponse()
        try expectProblem(refused, status: 503)
        #expect(refused.headers["retry-after"] == "1")
        try await newcomer.readUntilClosed()
        #expect(newcomer.closedByPeer)
        await server.shutdown()
    }

    /// `accept` failing for want of descriptors takes the listener out of the loop's poll instead of waking it again at
    /// once; it is polled again on the timer's tick, or as soon as a connection closes, and the newcomer is served.
    @Test func acceptStopsWhileDescriptorsRunOutAndResumesWhenOneIsFreed() async throws {
        let exhausted = Atomic<Bool>(false), attempts = Atomic<Int>(0)
        let accept: @Sendable (Int32) -> Int32 = { listener in
            attempts.wrappingAdd(1, ordering: .relaxed)
            guard !exhausted.load(ordering: .relaxed) else { errno = EMFILE; return -1 }
            return EventLoop.systemAccept(listener)
        }
        let clock = ManualClock()
        let server = try makeSUT({ $0.threads = 1 }, clock: clock, accept: accept)
        var first: TCPTestClient? = try TCPTestClient(port: server.port)
        first?.write("GET /json HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try await first?.readResponse().status == 200)

        exhausted.store(true, ordering: .relaxed)
        let newcomer = try TCPTestClient(port: server.port)  // waits in the backlog
        try await eventually("the loop stops accepting", within: .seconds(30)) { server.isAcceptPaused }
        let tried = attempts.load(ordering: .relaxed)
        for _ in 0..<1_000 { await Task.yield() }
        #expect(attempts.load(ordering: .relaxed) == tried, "no accept while paused")
        #expect(server.metrics.counter("enroute_accept_paused_total") >= 1)

        // The timer's tick tries again (still out of descriptors: paused again after one more attempt).
        await clock.advance(by: .seconds(1))
        try await eventually("the tick tried again", within: .seconds(30)) {
            attempts.load(ordering: .relaxed) > tried && server.isAcceptPaused
        }

        // A connection closing frees a descriptor: the newcomer is taken at once, without a tick.
        exhausted.store(false, ordering: .relaxed)
        first = nil
        try await eventually("the loop accepts again", within: .seconds(30)) { !server.isAcceptPaused }
        newcomer.write("GET /json HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try await newcomer.readResponse().status == 200)
        await server.shutdown()
    }

    // MARK: - Request deadlines

    @Test func aHandlerPastTheRequestDeadlineAnswers503AndIsCancelled() async throws {
        let clock = ManualClock()
        let probe = Probe()
        let server = try makeSUT({ $0.requestDeadline = .seconds(5) }, clock: clock, probe: probe)
        var cancelled = probe.cancelled.stream.makeAsyncIterator()
        let client = try TCPTestClient(port: server.port)
        client.write("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
        try await eventually("the handler runs", within: .seconds(30)) { server.connectionCount(in: .busy) == 1 }
        await clock.advance(by: .seconds(4))
        #expect(server.connectionCount(in: .busy) == 1, "still running before the deadline")
        await clock.advance(by: .seconds(1))
        let response = try await client.readResponse()
        try expectProblem(response, status: 503)
        #expect(response.headers["retry-after"] == "1")
        #expect(await cancelled.next() != nil, "the handler saw its cancellation")
        #expect(server.metrics.counter("enroute_request_deadline_exceeded_total") == 1)
        // The connection serves on.
        client.write("GET /json HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try await client.readResponse().status == 200)
        await server.shutdown()
    }

    @Test func aStreamOutlivesTheRequestDeadlineOnceItHasStarted() async throws {
        let clock = ManualClock()
        let server = try makeSUT(
            {
                $0.requestDeadline = .seconds(5); $0.heartbeatInterval = .seconds(15)
            }, clock: clock)
        let client = try TCPTestClient(port: server.port)
        client.write("GET /events HTTP/1.1\r\nHost: x\r\n\r\n")
        try await client.read(untilContains: "data: first")
        await clock.advance(by: .seconds(15))
        try await client.read(untilContains: ": heartbeat")
        #expect(!client.closedByPeer)
        #expect(server.openStreamCount == 1)
        await server.shutdown()
    }
}
