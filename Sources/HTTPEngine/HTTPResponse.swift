public import Foundation
public import EnRouteModels

/// What a handler answers: a status, headers and one of three kinds of body.
public struct HTTPResponse: Sendable {
    /// The body kinds the engine can send.
    public enum Body: Sendable {
        case bytes([UInt8])
        /// A Server-Sent Events stream produced by the closure until it returns or the client leaves.
        case eventStream(EventStream)
        /// A WebSocket session after the 101 answer.
        case webSocket(WebSocketSession)
    }

    public var status: Int
    public var headers: HTTPHeaders
    public var body: Body

    public init(status: Int = 200, headers: HTTPHeaders = HTTPHeaders(), body: Body = .bytes([])) {
        self.status = status; self.headers = headers; self.body = body
    }

    /// A 2xx JSON answer encoded with the wire coder.
    public static func json(_ value: some Encodable, status: Int = 200) throws -> HTTPResponse {
        let bytes = try Array(WireCoding.encoder().encode(value))
        return .jsonBytes(bytes, status: status)
    }

    /// A JSON answer from bytes already encoded.
    public static func jsonBytes(_ bytes: [UInt8], status: Int = 200) -> HTTPResponse {
        HTTPResponse(status: status, headers: jsonHeaders, body: .bytes(bytes))
    }

    /// The fields of every JSON answer, made once and shared (a handler that adds one copies them then).
    private static let jsonHeaders = HTTPHeaders([("Content-Type", "application/json"), ("Cache-Control", "no-store")])

    /// A body-less answer such as 204.
    public static func empty(_ status: Int = 204) -> HTTPResponse { HTTPResponse(status: status) }

    /// A text answer with the given media type.
    public static func text(
        _ text: String, contentType: String = "text/plain; charset=utf-8", status: Int = 200
    ) -> HTTPResponse {
        var headers = HTTPHeaders()
        headers.add("Content-Type", contentType)
        return HTTPResponse(status: status, headers: headers, body: .bytes(Array(text.utf8)))
    }

    /// An SSE answer whose events come from `produce`.
    public static func eventStream(
        _ produce: @escaping @Sendable (EventStreamWriter) async throws -> Void
    ) -> HTTPResponse {
        HTTPResponse(status: 200, headers: EventStream.headers, body: .eventStream(EventStream(produce: produce)))
    }

    /// A WebSocket answer (101) whose session runs in `session`.
    public static func webSocket(_ session: @escaping @Sendable (WebSocket) async -> Void) -> HTTPResponse {
        HTTPResponse(status: 101, body: .webSocket(WebSocketSession(session)))
    }

    /// A live answer from one producer of events: SSE, or WebSocket text frames `{"type","id","data"}`
    /// (framed as channel members get them) when `request` asks to upgrade. Ends when the producer
    /// returns or the client leaves; what a WebSocket client sends, other than control frames, is ignored.
    public static func live(
        _ request: HTTPRequest,
        _ produce: @escaping @Sendable (_ emit: @Sendable (LiveEvent) throws -> Void) async throws -> Void
    ) -> HTTPResponse {
        guard request.isWebSocketUpgrade else {
            return .eventStream { writer in try await produce { try writer.write(LiveFrames.sse([$0])) } }
        }
        return .webSocket { ws in
            await withTaskGroup(of: Void.self) { group in
                group.addTask { try? await produce { try ws.write(frames: LiveFrames.webSocket([$0])) } }
                group.addTask { for await _ in ws.messages {} }
                await group.next()
                group.cancelAll()
            }
        }
    }

    /// The body bytes of a `.bytes` answer; empty for streams.
    public var bodyBytes: [UInt8] {
        if case .bytes(let bytes) = body { return bytes }
        return []
    }
}
