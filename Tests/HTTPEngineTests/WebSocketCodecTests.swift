import Testing
import TestSupport
@testable import HTTPEngine

@Suite struct WebSocketCodecTests {
    func frame(_ opcode: UInt8, _ payload: [UInt8], fin: Bool = true, masked: Bool = true) -> [UInt8] {
        TCPTestClient.webSocketFrame(opcode: opcode, payload: payload, fin: fin, masked: masked)
    }

    func closeCode(_ actions: [WebSocketCodec.Action]) -> UInt16? {
        for case .closeAfterWrite(_, let code) in actions { return code }
        return nil
    }

    @Test func acceptKeyMatchesRFC6455Example() {
        #expect(WebSocketCodec.acceptValue(forKey: "dGhlIHNhbXBsZSBub25jZQ==") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
    }

    @Test func unmasksTextDeliveredInArbitraryChunks() {
        var codec = WebSocketCodec(maxMessageSize: 1 << 20)
        let bytes = frame(0x1, Array("héllo".utf8)) + frame(0x2, Array(repeating: 7, count: 70_000))
        var actions: [WebSocketCodec.Action] = []
        for chunk in stride(from: 0, to: bytes.count, by: 5).map({ Array(bytes[$0..<min($0 + 5, bytes.count)]) }) {
            actions += codec.receive(chunk)
        }
        #expect(actions == [.deliver(.text("héllo")), .deliver(.binary(Array(repeating: 7, count: 70_000)))])
    }

    @Test func reassemblesFragmentsWithAPingInBetween() {
        var codec = WebSocketCodec(maxMessageSize: 1024)
        let actions = codec.receive(
            frame(0x1, Array("ab".utf8), fin: false) + frame(0x9, [1, 2]) + frame(0x0, Array("cd".utf8), fin: false)
                + frame(0x0, Array("e".utf8)))
        #expect(actions == [.write(WebSocketCodec.frame(opcode: 0xA, payload: [1, 2])), .deliver(.text("abcde"))])
    }

    @Test func unmaskedClientFrameIsAProtocolError() {
        var codec = WebSocketCodec(maxMessageSize: 1024)
        #expect(closeCode(codec.receive(frame(0x1, [65], masked: false))) == 1002)
    }

    @Test func oversizeMessageClosesWith1009BeforeBuffering() {
        var codec = WebSocketCodec(maxMessageSize: 100)
        #expect(closeCode(codec.receive(Array(frame(0x2, Array(repeating: 0, count: 101)).prefix(8)))) == 1009)
        var fragmented = WebSocketCodec(maxMessageSize: 100)
        #expect(
            closeCode(
                fragmented.receive(
                    frame(0x2, Array(repeating: 0, count: 60), fin: false) + frame(0x0, Array(repeating: 0, count: 60)))
            ) == 1009)
    }

    @Test func invalidUTF8TextClosesWith1007() {
        var codec = WebSocketCodec(maxMessageSize: 100)
        #expect(closeCode(codec.receive(frame(0x1, [0xC3, 0x28]))) == 1007)
    }

    @Test(
        arguments: [
            ([0x03, 0xE8] as [UInt8], UInt16(1000)),
            ([0x0F, 0xA0], 4000),
            ([0x03, 0xED], 1002),  // 1005 may never be sent
            ([0x01], 1002),
        ] as [([UInt8], UInt16)])
    func closeHandshakeEchoesValidCodes(payload: [UInt8], expected: UInt16) {
        var codec = WebSocketCodec(maxMessageSize: 100)
        #expect(closeCode(codec.receive(frame(0x8, payload))) == expected)
        #expect(codec.closeSent)
    }

    @Test func protocolViolationsAre1002() {
        for bad in [
            frame(0x1, [1], fin: true).enumerated().map { $0.offset == 0 ? $0.element | 0x40 : $0.element },  // RSV1
            frame(0x3, [1]),  // reserved opcode
            frame(0x0, [1]),  // continuation with no start
            frame(0x9, [1], fin: false),  // fragmented control frame
            frame(0x1, [1], fin: false) + frame(0x1, [1]),
        ] {  // new message inside a fragmented one
            var codec = WebSocketCodec(maxMessageSize: 100)
            #expect(closeCode(codec.receive(bad)) == 1002)
        }
    }

    @Test func serverFramesUseTheShortestLength() {
        #expect(WebSocketCodec.frame(opcode: 1, payload: Array(repeating: 0, count: 125))[1] == 125)
        #expect(
            Array(WebSocketCodec.frame(opcode: 1, payload: Array(repeating: 0, count: 126))[1...3]) == [126, 0, 126])
        #expect(WebSocketCodec.frame(opcode: 1, payload: Array(repeating: 0, count: 70_000))[1] == 127)
    }
}

/// The codec from the client's end (the Linux tools' WebSocketClient): it masks what it writes and refuses masked
/// frames.
@Suite struct WebSocketClientCodecTests {
    static let key: [UInt8] = [0x37, 0xFA, 0x21, 0x3D]

    @Test func clientFramesAreMaskedAsTheRFCsExampleShows() {
        let codec = WebSocketCodec(maxMessageSize: 1024, maskKey: { Self.key })
        // RFC 6455 §5.7: a masked "Hello".
        #expect(
            codec.outgoing(opcode: 0x1, payload: Array("Hello".utf8)) == [
                0x81, 0x85, 0x37, 0xFA, 0x21, 0x3D, 0x7F, 0x9F, 0x4D, 0x51, 0x58,
            ])
        #expect(
            codec.outgoing(opcode: 0x1, payload: Array("Hello".utf8))
                == TCPTestClient.webSocketFrame(opcode: 0x1, payload: Array("Hello".utf8)))
    }

    @Test func aServerReadsWhatAClientWritesAtEveryLengthEncoding() {
        let client = WebSocketCodec(maxMessageSize: 1 << 20, maskKey: { Self.key })
        for size in [0, 125, 126, 65_535, 65_536] {
            var server = WebSocketCodec(maxMessageSize: 1 << 20)
            let payload = (0..<size).map { UInt8($0 & 0xFF) }
            #expect(
                server.receive(client.outgoing(opcode: 0x2, payload: payload)) == [.deliver(.binary(payload))],
                "\(size) bytes")
        }
    }

    @Test func theClientReadsUnmaskedFramesAndRefusesMaskedOnes() {
        var client = WebSocketCodec(maxMessageSize: 1024, maskKey: { Self.key })
        #expect(
            client.receive(WebSocketCodec.frame(opcode: 0x1, payload: Array("hei".utf8))) == [.deliver(.text("hei"))])
        let actions = client.receive(TCPTestClient.webSocketFrame(opcode: 0x1, payload: [65]))
        guard case .closeAfterWrite(let frame, let code) = actions.last else {
            Issue.record("no close: \(actions)"); return
        }
        #expect(code == 1002)
        #expect(frame.count > 1 && frame[1] & 0x80 != 0, "the client's close frame is masked too")
    }

    @Test func theClientAnswersPingsWithMaskedPongs() {
        var client = WebSocketCodec(maxMessageSize: 1024, maskKey: { Self.key })
        #expect(
            client.receive(WebSocketCodec.frame(opcode: 0x9, payload: [1, 2])) == [
                .write(WebSocketCodec.maskedFrame(opcode: 0xA, payload: [1, 2], key: Self.key))
            ])
    }
}
