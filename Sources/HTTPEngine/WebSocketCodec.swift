import Foundation
import EnRouteCrypto

/// One complete WebSocket data message.
public enum WebSocketMessage: Sendable, Equatable {
    case text(String)
    case binary([UInt8])
}

/// RFC 6455 close codes the engine sends.
public enum WebSocketCloseCode {
    public static let normal: UInt16 = 1000
    public static let goingAway: UInt16 = 1001
    public static let protocolError: UInt16 = 1002
    public static let unsupportedData: UInt16 = 1003
    public static let invalidPayload: UInt16 = 1007
    public static let policyViolation: UInt16 = 1008
    public static let messageTooBig: UInt16 = 1009
    public static let internalError: UInt16 = 1011
}

/// RFC 6455 framing as a pure state machine: bytes in, actions out, for either end.
///
/// On the server side it unmasks client frames (and refuses unmasked ones); on the client side (`maskKey` given) it
/// refuses masked frames and masks what it writes (§5.3). Either way it reassembles fragments, answers pings,
/// validates UTF-8 (1007), bounds message size (1009) and runs the close handshake.
struct WebSocketCodec {
    /// What the owner must do after feeding bytes.
    enum Action: Equatable {
        case deliver(WebSocketMessage)
        /// Write these bytes (a frame) to the peer.
        case write([UInt8])
        /// Write this close frame, then close the connection once it is flushed.
        case closeAfterWrite([UInt8], code: UInt16)
    }

    let maxMessageSize: Int
    private var buffer: [UInt8] = []
    private var readIndex = 0
    private var fragmentOpcode: UInt8?
    private var fragments: [UInt8] = []
    private(set) var closeSent = false
    private(set) var closeReceived = false
    private var failed = false

    /// The client's masking keys, four bytes each; nil on the server, which never masks.
    private let maskKey: (@Sendable () -> [UInt8])?

    /// A server's codec, or a client's when `maskKey` gives its masking keys.
    init(maxMessageSize: Int, maskKey: (@Sendable () -> [UInt8])? = nil) {
        self.maxMessageSize = maxMessageSize; self.maskKey = maskKey
    }

    /// A frame from this end: masked by a client, plain from a server.
    func outgoing(opcode: UInt8, payload: some Collection<UInt8>) -> [UInt8] {
        guard let maskKey else { return Self.frame(opcode: opcode, payload: payload) }
        return Self.maskedFrame(opcode: opcode, payload: payload, key: maskKey())
    }

    /// A close frame from this end.
    func outgoingClose(code: UInt16, reason: String) -> [UInt8] {
        outgoing(opcode: 0x8, payload: [UInt8(code >> 8), UInt8(code & 0xFF)] + Array(reason.utf8.prefix(123)))
    }

    /// Feeds bytes from the socket; returns what to do, in order.
    mutating func receive(_ bytes: some Collection<UInt8>) -> [Action] {
        guard !failed, !closeReceived else { return [] }
        buffer.append(contentsOf: bytes)
        var actions: [Action] = []
        while let action = nextFrame(into: &actions), action {}
        if readIndex > 0 {
            buffer.removeFirst(readIndex)
            readIndex = 0
        }
        return actions
    }

    /// A close frame to send when this side starts the close handshake.
    mutating func startClose(code: UInt16, reason: String = "") -> [UInt8]? {
        guard !closeSent else { return nil }
        closeSent = true
        return outgoingClose(code: code, reason: reason)
    }

    // Parses one frame if complete; returns true to keep going, false when more bytes are needed, nil to stop.
    private mutating func nextFrame(into actions: inout [Action]) -> Bool? {
        let head: FrameHead
        switch readFrameHead(&actions) {
        case .head(let read): head = read
        case .incomplete: return false
        case .failed: return nil
        }
        let maskLength = head.masked ? 4 : 0
        guard buffer.count - readIndex >= head.size + maskLength + head.length else { return false }
        let maskStart = readIndex + head.size
        let start = maskStart + maskLength
        var payload = Array(buffer[start..<(start + head.length)])
        if head.masked {
            let mask = (buffer[maskStart], buffer[maskStart + 1], buffer[maskStart + 2], buffer[maskStart + 3])
            for i in 0..<head.length {
                let m: UInt8
                switch i & 3 {
                case 0: m = mask.0;
                case 1: m = mask.1;
                case 2: m = mask.2;
                default: m = mask.3
                }
                payload[i] ^= m
            }
        }
        readIndex = start + head.length
        return handleFrame(head, payload, &actions)
    }

    /// What a frame's first bytes say: whether it ends its message, its opcode, whether it is masked, its payload's
    /// length, and how many bytes they take (the mask key aside).
    private struct FrameHead {
        var fin: Bool
        var opcode: UInt8
        var masked: Bool
        var length: Int
        var size: Int
    }

    /// Reading a frame's first bytes gave its head, needs more bytes, or failed the connection.
    private enum FrameHeadRead {
        case head(FrameHead)
        case incomplete
        case failed
    }

    /// The head of the frame at `readIndex`, checked against the rules for masks, lengths, opcodes and control
    /// frames before its payload is waited for.
    private mutating func readFrameHead(_ actions: inout [Action]) -> FrameHeadRead {
        let available = buffer.count - readIndex
        guard available >= 2 else { return .incomplete }
        let b0 = buffer[readIndex], b1 = buffer[readIndex + 1]
        var head = FrameHead(fin: b0 & 0x80 != 0, opcode: b0 & 0x0F, masked: b1 & 0x80 != 0, length: 0, size: 2)
        guard b0 & 0x70 == 0 else { return failHead(WebSocketCloseCode.protocolError, "reserved bits set", &actions) }
        if maskKey == nil, !head.masked {
            return failHead(WebSocketCloseCode.protocolError, "client frames must be masked", &actions)
        }
        if maskKey != nil, head.masked {
            return failHead(WebSocketCloseCode.protocolError, "server frames must not be masked", &actions)
        }
        head.length = Int(b1 & 0x7F)
        if head.length == 126 {
            guard available >= 4 else { return .incomplete }
            head.length = Int(buffer[readIndex + 2]) << 8 | Int(buffer[readIndex + 3])
            head.size = 4
            guard head.length >= 126 else {
                return failHead(WebSocketCloseCode.protocolError, "length not minimally encoded", &actions)
            }
        } else if head.length == 127 {
            guard available >= 10 else { return .incomplete }
            var value: UInt64 = 0
            for i in 0..<8 { value = value << 8 | UInt64(buffer[readIndex + 2 + i]) }
            guard value >> 63 == 0 else {
                return failHead(WebSocketCloseCode.protocolError, "length has its top bit set", &actions)
            }
            guard value <= UInt64(maxMessageSize) else {
                return failHead(WebSocketCloseCode.messageTooBig, "message too big", &actions)
            }
            head.length = Int(value)
            head.size = 10
            guard head.length > 0xFFFF else {
                return failHead(WebSocketCloseCode.protocolError, "length not minimally encoded", &actions)
            }
        }
        if head.opcode & 0x08 != 0 {
            guard head.opcode <= 0xA else {
                return failHead(WebSocketCloseCode.protocolError, "unknown opcode", &actions)
            }
            guard head.fin, head.length <= 125 else {
                return failHead(WebSocketCloseCode.protocolError, "bad control frame", &actions)
            }
        } else {
            guard head.opcode <= 0x2 else {
                return failHead(WebSocketCloseCode.protocolError, "unknown opcode", &actions)
            }
            if fragments.count + head.length > maxMessageSize {
                return failHead(WebSocketCloseCode.messageTooBig, "message too big", &actions)
            }
        }
        return .head(head)
    }

    private mutating func failHead(_ code: UInt16, _ reason: String, _ actions: inout [Action]) -> FrameHeadRead {
        _ = fail(code, reason, &actions)
        return .failed
    }

    /// Acts on a whole frame: answers a ping, takes a close, or adds to (and delivers) a message.
    private mutating func handleFrame(_ head: FrameHead, _ payload: [UInt8], _ actions: inout [Action]) -> Bool? {
        switch head.opcode {
        case 0x9:
            if !closeSent { actions.append(.write(outgoing(opcode: 0xA, payload: payload))) }
            return true
        case 0xA:
            return true
        case 0x8:
            return handleClose(payload, &actions)
        case 0x0:
            guard let first = fragmentOpcode else {
                return fail(WebSocketCloseCode.protocolError, "continuation without a start", &actions)
            }
            fragments.append(contentsOf: payload)
            if head.fin {
                fragmentOpcode = nil
                let whole = fragments
                fragments = []
                return deliver(opcode: first, whole, &actions)
            }
            return true
        default:
            guard fragmentOpcode == nil else {
                return fail(WebSocketCloseCode.protocolError, "new message inside a fragmented one", &actions)
            }
            if head.fin { return deliver(opcode: head.opcode, payload, &actions) }
            fragmentOpcode = head.opcode
            fragments = payload
            return true
        }
    }

    private mutating func deliver(opcode: UInt8, _ payload: [UInt8], _ actions: inout [Action]) -> Bool? {
        if opcode == 0x1 {
            guard let text = String(validating: payload, as: UTF8.self) else {
                return fail(WebSocketCloseCode.invalidPayload, "text is not valid UTF-8", &actions)
            }
            actions.append(.deliver(.text(text)))
        } else {
            actions.append(.deliver(.binary(payload)))
        }
        return true
    }

    private mutating func handleClose(_ payload: [UInt8], _ actions: inout [Action]) -> Bool? {
        closeReceived = true
        var code = WebSocketCloseCode.normal
        if payload.count == 1 {
            return fail(WebSocketCloseCode.protocolError, "close payload of one byte", &actions, force: true)
        }
        if payload.count >= 2 {
            code = UInt16(payload[0]) << 8 | UInt16(payload[1])
            let valid = (1000...1003).contains(code) || (1007...1011).contains(code) || (3000...4999).contains(code)
            guard valid else {
                return fail(WebSocketCloseCode.protocolError, "invalid close code", &actions, force: true)
            }
            guard String(validating: payload[2...], as: UTF8.self) != nil else {
                return fail(WebSocketCloseCode.invalidPayload, "close reason is not valid UTF-8", &actions, force: true)
            }
        }
        if closeSent {
            actions.append(.closeAfterWrite([], code: code))
        } else {
            closeSent = true
            actions.append(.closeAfterWrite(outgoingClose(code: code, reason: ""), code: code))
        }
        return nil
    }

    private mutating func fail(
        _ code: UInt16, _ reason: String, _ actions: inout [Action], force: Bool = false
    ) -> Bool? {
        failed = true
        let frame: [UInt8]
        if closeSent && !force { frame = [] } else { frame = outgoingClose(code: code, reason: reason) }
        closeSent = true
        actions.append(.closeAfterWrite(frame, code: code))
        return nil
    }

    /// An unmasked server frame.
    static func frame(opcode: UInt8, payload: some Collection<UInt8>, fin: Bool = true) -> [UInt8] {
        var out: [UInt8] = [(fin ? 0x80 : 0) | opcode]
        let n = payload.count
        out.reserveCapacity(n + 10)
        if n < 126 {
            out.append(UInt8(n))
        } else if n <= 0xFFFF {
            out.append(126); out.append(UInt8(n >> 8)); out.append(UInt8(n & 0xFF))
        } else {
            out.append(127)
            for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8((UInt64(n) >> UInt64(shift)) & 0xFF)) }
        }
        out.append(contentsOf: payload)
        return out
    }

    /// A client's frame, its payload masked with the four bytes of `key` (RFC 6455 §5.3).
    static func maskedFrame(opcode: UInt8, payload: some Collection<UInt8>, key: [UInt8]) -> [UInt8] {
        precondition(key.count == 4, "a masking key is four bytes")
        var out = frame(opcode: opcode, payload: [UInt8]())
        let n = payload.count
        out.removeLast(out.count - 1)
        if n < 126 {
            out.append(0x80 | UInt8(n))
        } else if n <= 0xFFFF {
            out.append(0x80 | 126); out.append(UInt8(n >> 8)); out.append(UInt8(n & 0xFF))
        } else {
            out.append(0x80 | 127)
            for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8((UInt64(n) >> UInt64(shift)) & 0xFF)) }
        }
        out += key
        out.reserveCapacity(out.count + n)
        for (i, byte) in payload.enumerated() { out.append(byte ^ key[i & 3]) }
        return out
    }

    /// A close frame with a code and a reason cut to fit 125 bytes.
    static func closeFrame(code: UInt16, reason: String) -> [UInt8] {
        frame(opcode: 0x8, payload: [UInt8(code >> 8), UInt8(code & 0xFF)] + Array(reason.utf8.prefix(123)))
    }

    /// `Sec-WebSocket-Accept` for a client's key (RFC 6455 §4.2.2).
    static func acceptValue(forKey key: String) -> String {
        let digest = Digest.sha1(
            Array((key.trimmingCharacters(in: .whitespaces) + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").utf8))
        return Data(digest).base64EncodedString()
    }
}
