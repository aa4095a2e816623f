import Foundation
import Testing
import Synchronization
import TestSupport
@testable import HTTPEngine

/// A few live-socket tests of the engine itself; everything else goes through the router in-process.
@Suite(.serialized) struct HTTPServerLiveTests {
    final class Probe: Sendable {
        let cancelled = AsyncStream<Void>.makeStream()
        let lastEventID = Mutex<String?>(nil)
    }

    func makeSUT(
        _ configure: (inout HTTPServerConfiguration) -> Void = { _ in }, clock: ManualClock = ManualClock(),
        probe: Probe = Probe()
    ) throws -> HTTPServer {
        var router = Router()
        router.get("/json") { _ in .jsonBytes(Array(#"{"ok":true}"#.utf8)) }
        router.post("/upload", bodyLimit: 1024) { req in .text("got \(req.body.count)") }
        router.get("/events") { req in
            probe.lastEventID.withLock { $0 = req.headers["Last-Event-ID"] }
            return .eventStream { writer in
                try writer.send(event: "hello", id: "1", data: "first")
                await withTaskCancellationHandler {
                    let (never, _) = AsyncStream<Void>.makeStream()
                    for await _ in never {}
                } onCancel: {
                    probe.cancelled.continuation.yield()
                }
            }
        }
        router.get("/ws") { _ in
            .webSocket { ws in
                for await message in ws.messages {
                    switch message {
                    case .text(let t): try? ws.send(text: t)
                    case .binary(let b): try? ws.send(binary: b)
                    }
                }
            }
        }
        var config = HTTPServerConfiguration()
        config.port = 0
        config.threads = 2
        configure(&config)
        let server = HTTPServer(router: router, configuration: config, clock: clock)
        try server.start()
        return server
    }

    func upgrade(_ client: TCPTestClient) async throws {
        client.write(
            "GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: "
                + "dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
        )
        try await client.read(untilContains: "\r\n\r\n")
        #expect(client.text.hasPrefix("HTTP/1.1 101"))
        #expect(client.text.contains("s3pPLMBiTxaQ9kYGzzhZRbK+xOo="))
        client.consume(client.received.firstRange(of: Array("\r\n\r\n".utf8))!.upperBound)
    }

    @Test func keepAliveServesManyRequestsOnOneConnection() async throws {
        let server = try makeSUT()
        let client = try TCPTestClient(port: server.port)
        for _ in 0..<3 {
            client.write("GET /json HTTP/1.1\r\nHost: x\r\n\r\n")
            let response = try await client.readResponse()
            #expect(response.status == 200)
            #expect(String(decoding: response.body, as: UTF8.self) == #"{"ok":true}"#)
            #expect(response.headers["connection"]?.lowercased() != "close")
        }
        #expect(!client.closedByPeer)
        await server.shutdown()
    }

    @Test func oversizeBodyIs413ProblemBothDeclaredAndChunked() async throws {
        let server = try makeSUT()
        let declared = try TCPTestClient(port: server.port)
        declared.write(
            "POST /upload HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1025\r\n\r\n")
        let first = try await declared.readResponse()
        #expect(first.status == 413)
        #expect(first.headers["content-type"] == "application/problem+json")

        let chunked = try TCPTestClient(port: server.port)
        let body = String(repeating: "a", count: 1025)
        chunked.write(
            "POST /upload HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: "
                + "chunked\r\n\r\n\(String(body.count, radix: 16))\r\n\(body)\r\n0\r\n\r\n"
        )
        #expect(try await chunked.readResponse().status == 413)

        let fits = try TCPTestClient(port: server.port)
        fits.write(
            "POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 1024\r\n\r\n" + String(repeating: "b", count: 1024))
        let ok = try await fits.readResponse()
        #expect(ok.status == 200)
        #expect(String(decoding: ok.body, as: UTF8.self) == "got 1024")
        await server.shutdown()
    }

    @Test func unknownRouteIs404OverTheWire() async throws {
        let server = try makeSUT()
        let client = try TCPTestClient(port: server.port)
        client.write("GET /nowhere HTTP/1.1\r\nHost: x\r\n\r\n")
        let response = try await client.readResponse()
        #expect(response.status == 404)
        #expect(response.headers["content-type"] == "application/problem+json")
        await server.shutdown()
    }

    /// A client that stops sending for the idle timeout is closed, even while its header deadline is still far off.
    @Test func slowClientIsDisconnectedAfterTheIdleTimeout() async throws {
        let clock = ManualClock()
        let server = try makeSUT(
            {
                $0.idleTimeoutSeconds = 1; $0.headerTimeout = .seconds(10)
            }, clock: clock)
        let client = try TCPTestClient(port: server.port)
        client.write("GET /json HTTP/1.1\r\nHo")
        try await eventually("the connection is seen", within: .seconds(30)) { server.connectionCount(in: .head) == 1 }
        await clock.advance(by: .milliseconds(500))
        #expect(server.connectionCount(in: .head) == 1, "still open before the idle timeout")
        // The server's loop may read the bytes, and see each step of the clock, late on a loaded machine (a full
        // parallel run once needed more than 1.5 s): closed at the idle timeout means closed before the header
        // deadline at 10 s, the only other deadline that could close it.
        try await eventually(
            "closed once idle, before the header deadline", advancing: clock, by: .milliseconds(500), steps: 16
        ) {
            server.connectionCount(in: .head) == 0
        }
        try await client.readUntilClosed()
        #expect(client.closedByPeer)
        await server.shutdown()
    }

    /// Streams hold their slots: a newcomer past the cap is refused rather than cutting one off.
    @Test func connectionsBeyondTheCapGet503AndAreClosed() async throws {
        let server = try makeSUT {
            $0.connectionLimit = 2; $0.threads = 1
        }
        let a = try TCPTestClient(port: server.port), b = try TCPTestClient(port: server.port)
        for client in [a, b] {
            client.write("GET /events HTTP/1.1\r\nHost: x\r\n\r\n")
            try await client.read(untilContains: "data: first")
        }
        let c = try TCPTestClient(port: server.port)
        c.write("GET /json HTTP/1.1\r\nHost: x\r\n\r\n")
        let refused = try await c.readResponse()
        #expect(refused.status == 503)
        #expect(refused.headers["retry-after"] == "1")
        try await c.readUntilClosed()
        #expect(c.closedByPeer)
        await server.shutdown()
    }

    @Test func eventStreamSendsHeadersRetryHeartbeatAndPassesLastEventID() async throws {
        let clock = ManualClock()
        let probe = Probe()
        let server = try makeSUT({ $0.heartbeatInterval = .seconds(15) }, clock: clock, probe: probe)
        let client = try TCPTestClient(port: server.port)
        client.write("GET /events HTTP/1.1\r\nHost: x\r\nLast-Event-ID: 41\r\n\r\n")
        try await client.read(untilContains: "data: first\n\n")
        let text = client.text.lowercased()
        #expect(text.contains("content-type: text/event-stream"))
        #expect(text.contains("cache-control: no-store"))
        #expect(text.contains("x-accel-buffering: no"))
        #expect(client.dechunkedBody.hasPrefix("retry: 3000\n\nid: 1\nevent: hello\ndata: first\n\n"))
        #expect(probe.lastEventID.withLock { $0 } == "41")

        await clock.sleepers(atLeast: 1)
        await clock.advance(by: .seconds(15))
        try await client.read(untilContains: ": heartbeat")
        await server.shutdown()
    }

    @Test func clientLeavingCancelsTheProducer() async throws {
        let clock = ManualClock()
        let probe = Probe()
        let server = try makeSUT(clock: clock, probe: probe)
        var client: TCPTestClient? = try TCPTestClient(port: server.port)
        client!.write("GET /events HTTP/1.1\r\nHost: x\r\n\r\n")
        try await client!.read(untilContains: "data: first")
        client = nil  // closes the socket
        // The next heartbeat write finds the socket gone, and the producer is cancelled.
        var iterator = probe.cancelled.stream.makeAsyncIterator()
        let waiter = Task { await iterator.next() != nil }
        try await eventually("the stream is closed", advancing: clock, by: .seconds(15), sleepers: 1) {
            server.openStreamCount == 0
        }
        #expect(await waiter.value)
        await server.shutdown()
    }

    @Test func webSocketEchoesMaskedFramesAndAnswersPing() async throws {
        let server = try makeSUT()
        let client = try TCPTestClient(port: server.port)
        try await upgrade(client)
        client.write(TCPTestClient.webSocketFrame(opcode: 0x1, payload: Array("hello".utf8)))
        let echo = try await client.readWebSocketFrame()
        #expect(echo.opcode == 0x1 && echo.payload == Array("hello".utf8))

        client.write(TCPTestClient.webSocketFrame(opcode: 0x9, payload: [9, 8, 7]))
        let pong = try await client.readWebSocketFrame()
        #expect(pong.opcode == 0xA && pong.payload == [9, 8, 7])

        client.write(
            TCPTestClient.webSocketFrame(opcode: 0x2, payload: Array(repeating: 5, count: 40_000), fin: false)
                + TCPTestClient.webSocketFrame(opcode: 0x0, payload: Array(repeating: 6, count: 10)))
        let big = try await client.readWebSocketFrame()
        #expect(big.opcode == 0x2 && big.payload.count == 40_010)

        client.write(TCPTestClient.webSocketFrame(opcode: 0x8, payload: [0x03, 0xE8]))
        let close = try await client.readWebSocketFrame()
        #expect(close.opcode == 0x8 && close.payload.prefix(2) == [0x03, 0xE8])
        try await client.readUntilClosed()
        #expect(client.closedByPeer)
        await server.shutdown()
    }

    /// A client that pipelines requests and never reads gets no more answers queued than the backlog allows: the
    /// server stops reading its requests instead of holding every answer in memory.
    @Test func aPipeliningClientThatNeverReadsHoldsNoMoreThanTheAnswerBacklog() async throws {
        let backlog = 64 * 1024
        // One request id for all, so that every answer is as long as the one the count below is made of.
        let server = try makeSUT {
            $0.maxAnswerBacklog = backlog
            $0.requestIDs = RequestIDs { "r" }
        }
        let client = try TCPTestClient(port: server.port, receiveBuffer: 4096)
        let batch = Array(repeating: "GET /json HTTP/1.1\r\nHost: x\r\n\r\n", count: 1_000).joined()
        // 100,000 answers are about 14 MB, far more than the backlog and both kernels' buffers; the writes block once
        // the server stops reading, so they run on a thread of their own, which the shutdown releases.
        let writer = Thread { for _ in 0..<100 { guard client.write(batch) else { return } } }
        writer.start()
        try await eventually("the server waits for the client to read", within: .seconds(30)) {
            server.backlogs().contains { $0.waiting }
        }
        let largest = server.backlogs().map(\.bytes).max() ?? 0
        #expect(largest <= backlog + 1024, "\(largest) bytes queued")
        // Once the client reads, the requests that waited are answered, every one.
        let one = try TCPTestClient(port: server.port)
        one.write("GET /json HTTP/1.1\r\nHost: x\r\n\r\n")
        try await one.read(untilContains: #"{"ok":true}"#)
        let total = 100_000 * one.received.count
        try await client.read(until: { $0.count >= total }, limit: 60)
        #expect(client.received.count == total)
        await server.shutdown()
    }

    /// Pongs count against the socket's outbound limit like any frame: a client that pings and never reads is
    /// dropped once that much waits for it, rather than growing the server without bound.
    @Test func aWebSocketClientThatPingsAndNeverReadsIsDroppedAtTheOutboundLimit() async throws {
        let server = try makeSUT { $0.maxWebSocketOutbound = 64 * 1024 }
        let client = try TCPTestClient(port: server.port)
        try await upgrade(client)
        let ping = TCPTestClient.webSocketFrame(opcode: 0x9, payload: Array(repeating: 7, count: 125))
        let pings = Array(Array(repeating: ping, count: 1_000).joined())
        // 64 MB of pings is far more than the kernel's buffers on both sides and the limit together.
        var sent = 0
        while sent < 64 << 20, client.write(pings) { sent += pings.count }
        #expect(sent < 64 << 20, "the server cut the connection after \(sent) bytes of pings")
        try await eventually("the connection is gone", within: .seconds(30)) { server.openConnectionCount == 0 }
        await server.shutdown()
    }

    @Test(
        arguments: [
            (TCPTestClient.webSocketFrame(opcode: 0x1, payload: Array(repeating: 65, count: 2_000)), UInt16(1009)),
            (TCPTestClient.webSocketFrame(opcode: 0x1, payload: [0xC3, 0x28]), 1007),
            (TCPTestClient.webSocketFrame(opcode: 0x1, payload: [65], masked: false), 1002),
        ] as [([UInt8], UInt16)])
    func webSocketViolationsCloseWithTheirCode(frame: [UInt8], code: UInt16) async throws {
        let server = try makeSUT { $0.maxWebSocketMessage = 1_000 }
        let client = try TCPTestClient(port: server.port)
        try await upgrade(client)
        client.write(frame)
        let close = try await client.readWebSocketFrame()
        #expect(close.opcode == 0x8)
        #expect(UInt16(close.payload[0]) << 8 | UInt16(close.payload[1]) == code)
        try await client.readUntilClosed()
        await server.shutdown()
    }

    /// An upgrade is a GET: a HEAD asking for one is refused and the connection goes on as HTTP.
    @Test func aHeadAskingToUpgradeIsRefusedAndTheConnectionServesOn() async throws {
        let server = try makeSUT()
        let client = try TCPTestClient(port: server.port)
        client.write(
            "HEAD /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
                + "GET /json HTTP/1.1\r\nHost: x\r\n\r\n")
        try await client.read(untilContains: #"{"ok":true}"#)
        #expect(client.text.hasPrefix("HTTP/1.1 400"))
        #expect(!client.text.contains("101"))
        await server.shutdown()
    }

    @Test func upgradeWithoutVersion13Is426() async throws {
        let server = try makeSUT()
        let client = try TCPTestClient(port: server.port)
        client.write(
            "GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: "
                + "dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 8\r\n\r\n"
        )
        let response = try await client.readResponse()
        #expect(response.status == 426)
        #expect(response.headers["sec-websocket-version"] == "13")
        await server.shutdown()
    }

    @Test func shutdownEndsOpenStreamsCleanlyAndClosesWebSockets() async throws {
        let server = try makeSUT()
        let sse = try TCPTestClient(port: server.port)
        sse.write("GET /events HTTP/1.1\r\nHost: x\r\n\r\n")
        try await sse.read(untilContains: "data: first")
        let ws = try TCPTestClient(port: server.port)
        try await upgrade(ws)

        let shutdown = Task { await server.shutdown() }
        try await sse.read(untilContains: "\r\n0\r\n\r\n")  // the chunked stream's clean end
        let close = try await ws.readWebSocketFrame()
        #expect(close.opcode == 0x8 && close.payload.prefix(2) == [0x03, 0xE9])
        ws.write(TCPTestClient.webSocketFrame(opcode: 0x8, payload: [0x03, 0xE9]))  // the client's answer ends it
        try await ws.readUntilClosed()
        await shutdown.value
        #expect(server.openStreamCount == 0)
        #expect(throws: (any Error).self) { _ = try TCPTestClient(port: server.port) }
    }

    @Test func shutdownAnswersAHandlerStillRunningAfterTheGracePeriodInsteadOfAborting() async throws {
        // A handler that ignores cancellation and never returns: shutdown answers its connection itself once
        // the grace period is over, instead of waiting for it forever.
        let started = AsyncStream<Void>.makeStream()
        var router = Router()
        router.get("/stuck") { _ in
            started.continuation.yield()
            let (never, _) = AsyncStream<Void>.makeStream()
            for await _ in never {}
            return .text("never")
        }
        var config = HTTPServerConfiguration()
        config.port = 0
        config.shutdownGrace = .milliseconds(50)
        let server = HTTPServer(router: router, configuration: config)
        try server.start()
        let client = try TCPTestClient(port: server.port)
        client.write("GET /stuck HTTP/1.1\r\nHost: x\r\n\r\n")
        var iterator = started.stream.makeAsyncIterator()
        await iterator.next()
        await server.shutdown()
        let response = try await client.readResponse()
        #expect(response.status == 503)
        #expect(String(decoding: response.body, as: UTF8.self).contains("shutting down"))
    }

    @Test func aWebSocketClientThatNeverAnswersACloseIsCutOffWhenTheClockSaysSo() async throws {
        let clock = ManualClock()
        let server = try makeSUT({ $0.webSocketCloseTimeout = .seconds(2) }, clock: clock)
        let client = try TCPTestClient(port: server.port)
        try await upgrade(client)
        // The echo session ends when its messages do; a close from the server starts the handshake.
        client.write(TCPTestClient.webSocketFrame(opcode: 0x1, payload: Array("hi".utf8)))
        _ = try await client.readWebSocketFrame()
        let shutdown = Task { await server.shutdown() }
        let close = try await client.readWebSocketFrame()
        #expect(close.opcode == 0x8)
        // No answer from the client: the connection stays until the timeout passes on the clock
        // (two sleepers: the SSE heartbeat and the close timer).
        await clock.sleepers(atLeast: 2)
        #expect(server.metrics.render().contains("enroute_open_websockets 1"), "still open before the timeout")
        await clock.advance(by: .seconds(2))
        try await client.readUntilClosed()
        #expect(client.closedByPeer)
        await shutdown.value
    }
}
