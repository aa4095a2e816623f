import Foundation
import Testing
import TestSupport
@testable import HTTPEngine

/// Live channels over real sockets: SSE members written from the event loops, keep-alive after a
/// stream that ends, and WebSocket members.
@Suite(.serialized) struct LiveChannelsSocketTests {
    let channels = LiveCounters.counters()

    /// A server with `/json` and `/live/{key}` following `channels` (the suite's counters by default).
    func makeSUT(
        _ configure: (inout HTTPServerConfiguration) -> Void = { _ in },
        channels: LiveChannels<String, Int>? = nil
    ) throws -> HTTPServer {
        let channels = channels ?? self.channels
        var router = Router()
        router.get("/json") { _ in .jsonBytes(Array(#"{"ok":true}"#.utf8)) }
        router.get("/live/{key}") { req in channels.stream(req, key: try req.parameter("key")) }
        var config = HTTPServerConfiguration()
        config.port = 0
        config.threads = 2
        configure(&config)
        let server = HTTPServer(router: router, configuration: config)
        try server.start()
        return server
    }

    @Test func sseEventsArriveAsChunksAndTheConnectionServesAgainAfterTheEnd() async throws {
        let server = try makeSUT()
        let client = try TCPTestClient(port: server.port)
        client.write("GET /live/k HTTP/1.1\r\nHost: x\r\n\r\n")
        try await client.read(untilContains: "data: {\"n\":0}")
        #expect(client.text.lowercased().contains("transfer-encoding: chunked"))
        for _ in 0..<3 { LiveCounters.bump(channels) }
        try await client.read(untilContains: "data: {\"n\":3}")
        LiveCounters.bump(channels, ends: true)
        try await client.read(untilContains: "\r\n0\r\n\r\n")
        #expect(
            client.dechunkedBody == "retry: 3000\n\n"
                + "id: 0\nevent: snapshot\ndata: {\"n\":0}\n\n" + "id: 1\nevent: count\ndata: {\"n\":1}\n\n"
                + "id: 2\nevent: count\ndata: {\"n\":2}\n\n" + "id: 3\nevent: count\ndata: {\"n\":3}\n\n"
                + "id: 4\nevent: count\ndata: {\"n\":4}\n\n")
        // The stream ended with its last chunk: keep-alive goes on.
        client.consume(client.received.count)
        client.write("GET /json HTTP/1.1\r\nHost: x\r\n\r\n")
        let next = try await client.readResponse()
        #expect(next.status == 200)
        #expect(String(decoding: next.body, as: UTF8.self) == #"{"ok":true}"#)
        try await eventually("the stream is closed", within: .seconds(30)) { server.openStreamCount == 0 }
        await server.shutdown()
    }

    @Test func membersComingAndGoingDuringPublishesLeaveTheStayersWhole() async throws {
        let server = try makeSUT()
        var stayers: [TCPTestClient] = []
        for _ in 0..<40 {
            let client = try TCPTestClient(port: server.port)
            client.write("GET /live/busy HTTP/1.1\r\nHost: x\r\n\r\n")
            try await client.read(untilContains: "data: {\"n\":0}")
            stayers.append(client)
        }
        let publishes = 200
        for k in 1...publishes {
            LiveCounters.bump(channels, "busy", ends: k == publishes)
            if k % 4 == 0, k < publishes {
                // Someone opens the stream and hangs up, while the publishes go on.
                let passer = try TCPTestClient(port: server.port)
                passer.write("GET /live/busy HTTP/1.1\r\nHost: x\r\n\r\n")
                try await passer.read(untilContains: "data: {")
            }
        }
        for client in stayers {
            try await client.read(untilContains: "\r\n0\r\n\r\n")
            let ids = LiveCounters.ids(client.dechunkedBody)
            // The raw tail tells a lost event from one that arrived out of its chunk framing.
            let first = client.text.prefix(700).debugDescription, last = client.text.suffix(400).debugDescription
            #expect(ids == Array(0...publishes), "a stayer saw \(ids.count) events; first \(first); last \(last)")
        }
        try await eventually("every stream closed", within: .seconds(30)) { server.openStreamCount == 0 }
        #expect(channels.channelCount == 0)
        await server.shutdown()
    }

    @Test func aStreamWhoseOpeningEndsItIsWholeAndTheConnectionServesAgain() async throws {
        let finished = LiveChannels<String, Int>(
            initial: { _ in 9 },
            opening: { n in
                LiveUpdate(events: [LiveCounters.event("final", n)], ends: true)
            })
        let server = try makeSUT(channels: finished)
        let client = try TCPTestClient(port: server.port)
        client.write("GET /live/k HTTP/1.1\r\nHost: x\r\n\r\n")
        try await client.read(untilContains: "\r\n0\r\n\r\n")
        #expect(client.dechunkedBody == "retry: 3000\n\nid: 9\nevent: final\ndata: {\"n\":9}\n\n")
        client.consume(client.received.count)
        client.write("GET /json HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try await client.readResponse().status == 200)
        #expect(finished.channelCount == 0)
        await server.shutdown()
    }

    @Test func aClientHangingUpLeavesTheGroupWithoutWaitingForAWrite() async throws {
        let server = try makeSUT()
        var client: TCPTestClient? = try TCPTestClient(port: server.port)
        client!.write("GET /live/gone HTTP/1.1\r\nHost: x\r\n\r\n")
        try await client!.read(untilContains: "data: {\"n\":0}")
        #expect(channels.memberCount("gone") == 1)
        client = nil  // closes the socket
        try await eventually("the member left", within: .seconds(30)) {
            channels.memberCount("gone") == 0 && server.openStreamCount == 0
        }
        #expect(channels.channelCount == 0)
        await server.shutdown()
    }

    @Test func aReaderThatFallsTooFarBehindIsDroppedNotBuffered() async throws {
        let server = try makeSUT { $0.maxStreamBuffer = 64 * 1024 }
        let client = try TCPTestClient(port: server.port)
        client.write("GET /live/slow HTTP/1.1\r\nHost: x\r\n\r\n")
        try await client.read(untilContains: "data: {\"n\":0}")
        // The client reads nothing more; 48 MB of events outgrow every socket buffer and the stream's own.
        let big = Array(repeating: UInt8(ascii: "x"), count: 64 * 1024)
        var published = 0
        while channels.memberCount("slow") > 0, published < 768 {
            channels.publish("slow") { n in
                n += 1
                return LiveUpdate(events: [LiveEvent(name: "big", id: "\(n)", data: big)])
            }
            published += 1
        }
        #expect(channels.memberCount("slow") == 0, "still a member after \(published) events")
        try await client.readUntilClosed(limit: 20)
        #expect(client.closedByPeer)
        #expect(
            !client.received.suffix(5).elementsEqual(Array("0\r\n\r\n".utf8)), "a dropped stream must not end cleanly")
        await server.shutdown()
    }

    @Test func anHTTP10ClientGetsThePlainStreamClosedAtTheEnd() async throws {
        let server = try makeSUT()
        let client = try TCPTestClient(port: server.port)
        client.write("GET /live/old HTTP/1.0\r\nHost: x\r\n\r\n")
        try await client.read(untilContains: "data: {\"n\":0}")
        LiveCounters.bump(channels, "old", ends: true)
        try await client.readUntilClosed()
        let text = client.text
        #expect(!text.lowercased().contains("transfer-encoding: chunked"))
        #expect(
            text.hasSuffix(
                "retry: 3000\n\nid: 0\nevent: snapshot\ndata: {\"n\":0}\n\nid: 1\nevent: count\ndata: {\"n\":1}\n\n"))
        await server.shutdown()
    }

    /// The engine's reply buffer for an unchunked stream is small (it only carries what goes out before the stream is
    /// written directly): an opening many times its size still arrives whole and in order.
    @Test func anHTTP10ClientGetsAnOpeningLargerThanTheReplyBufferWhole() async throws {
        let pad = String(repeating: "p", count: 5_000)
        let channels = LiveChannels<String, Int>(
            initial: { _ in 0 },
            opening: { n in
                LiveUpdate(
                    events: (0..<3).map {
                        LiveEvent(
                            name: "snapshot", id: "\(n).\($0)", data: Array("{\"part\":\($0),\"pad\":\"\(pad)\"}".utf8))
                    })
            })
        let server = try makeSUT(channels: channels)
        let client = try TCPTestClient(port: server.port)
        client.write("GET /live/big HTTP/1.0\r\nHost: x\r\n\r\n")
        let last = "\"part\":2,\"pad\":\"\(pad)\"}\n\n"
        try await client.read(until: { String(decoding: $0, as: UTF8.self).hasSuffix(last) })
        let body = client.text.components(separatedBy: "\r\n\r\n").dropFirst().joined(separator: "\r\n\r\n")
        let expected =
            "retry: 3000\n\n"
            + (0..<3).map { "id: 0.\($0)\nevent: snapshot\ndata: {\"part\":\($0),\"pad\":\"\(pad)\"}\n\n" }.joined()
        #expect(body == expected)
        await server.shutdown()
    }

    @Test func aWebSocketMemberGetsJSONFramesThenANormalClose() async throws {
        let server = try makeSUT()
        let client = try TCPTestClient(port: server.port)
        client.write(
            "GET /live/ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: "
                + "dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
        )
        try await client.read(untilContains: "\r\n\r\n")
        #expect(client.text.hasPrefix("HTTP/1.1 101"))
        client.consume(client.received.firstRange(of: Array("\r\n\r\n".utf8))!.upperBound)
        let opening = try await client.readWebSocketFrame()
        #expect(
            opening.opcode == 0x1
                && String(decoding: opening.payload, as: UTF8.self) == #"{"type":"snapshot","id":"0","data":{"n":0}}"#)
        // What the client sends is ignored; pings are still answered.
        client.write(TCPTestClient.webSocketFrame(opcode: 0x1, payload: Array("hi".utf8)))
        client.write(TCPTestClient.webSocketFrame(opcode: 0x9, payload: [1]))
        let pong = try await client.readWebSocketFrame()
        #expect(pong.opcode == 0xA)
        LiveCounters.bump(channels, "ws", ends: true)
        let last = try await client.readWebSocketFrame()
        #expect(String(decoding: last.payload, as: UTF8.self) == #"{"type":"count","id":"1","data":{"n":1}}"#)
        let close = try await client.readWebSocketFrame()
        #expect(close.opcode == 0x8 && close.payload.prefix(2) == [0x03, 0xE8])
        client.write(TCPTestClient.webSocketFrame(opcode: 0x8, payload: [0x03, 0xE8]))
        try await client.readUntilClosed()
        #expect(channels.channelCount == 0)
        await server.shutdown()
    }
}
