import Synchronization

/// One upgraded WebSocket session: incoming messages as an AsyncSequence, plus `send` and `close`.
public final class WebSocket: Sendable {
    /// Complete messages from the client; finishes when the connection closes.
    public let messages: AsyncStream<WebSocketMessage>
    let transport: any WebSocketTransport

    init(messages: AsyncStream<WebSocketMessage>, transport: any WebSocketTransport) {
        self.messages = messages
        self.transport = transport
    }

    /// Sends a text message; throws once the connection is closed or the client is too slow.
    public func send(text: String) throws {
        guard transport.write(WebSocketCodec.frame(opcode: 0x1, payload: Array(text.utf8))) else {
            throw EventStreamClosed()
        }
    }

    /// Writes frames already encoded.
    func write(frames: [UInt8]) throws {
        guard transport.write(frames) else { throw EventStreamClosed() }
    }

    /// Sends a binary message.
    public func send(binary: [UInt8]) throws {
        guard transport.write(WebSocketCodec.frame(opcode: 0x2, payload: binary)) else { throw EventStreamClosed() }
    }

    /// Starts the close handshake with `code`; the connection ends when the client answers.
    public func close(code: UInt16 = WebSocketCloseCode.normal, reason: String = "") {
        transport.close(code: code, reason: reason)
    }

    /// True until the connection is closed.
    public var isOpen: Bool { transport.isOpen }
}

/// The byte pipe under a WebSocket: an upgraded socket, or memory in tests.
protocol WebSocketTransport: Sendable {
    func write(_ frame: [UInt8]) -> Bool
    func close(code: UInt16, reason: String)
    var isOpen: Bool { get }
}

/// What runs on an upgraded connection: a session task, or membership of a live channel.
public struct WebSocketSession: Sendable {
    enum Kind: Sendable {
        case run(@Sendable (WebSocket) async -> Void)
        case channel(@Sendable (any LiveMember) -> Void)
    }
    let kind: Kind

    /// A session run by `body` until it returns or the connection closes.
    public init(_ body: @escaping @Sendable (WebSocket) async -> Void) { kind = .run(body) }

    init(join: @escaping @Sendable (any LiveMember) -> Void) { kind = .channel(join) }
}
