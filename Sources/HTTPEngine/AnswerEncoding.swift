import Foundation

/// When a request began, for its latency: a duration on `ContinuousClock` since the process first read that clock.
/// The clock's own instant is resilient (its size is known only at run time), so every type that carried it, and every
/// enum carrying those, would be copied through the runtime on each request.
struct RequestStart: Sendable {
    private static let origin = ContinuousClock.now
    private let sinceOrigin: Duration

    /// Now.
    static var now: RequestStart { RequestStart(sinceOrigin: origin.duration(to: ContinuousClock.now)) }

    /// The time since this start, in seconds.
    var secondsElapsed: Double {
        let d = Self.origin.duration(to: ContinuousClock.now) - sinceOrigin
        return Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
    }
}

/// What an answer needs to know of the request it answers, wherever it is written from.
struct AnswerContext: Sendable {
    var method: String
    /// The route pattern for the metrics label ("unmatched" for none).
    var route: String
    var minorVersion: UInt8
    var keepAlive: Bool
    var isHead: Bool
    /// The request's headers, for a WebSocket upgrade's checks.
    var headers: HTTPHeaders
    var started: RequestStart

    /// The answer to the request `head` begins, received at `started`; `keepAlive` overrides the client's wish.
    init(for head: RequestHead, started: RequestStart, keepAlive: Bool? = nil) {
        self.init(
            method: head.method, route: "unmatched", minorVersion: head.minorVersion,
            keepAlive: keepAlive ?? head.keepAlive, isHead: head.method == "HEAD", headers: head.headers,
            started: started)
    }

    init(
        method: String, route: String, minorVersion: UInt8, keepAlive: Bool, isHead: Bool, headers: HTTPHeaders,
        started: RequestStart
    ) {
        self.method = method
        self.route = route
        self.minorVersion = minorVersion
        self.keepAlive = keepAlive
        self.isHead = isHead
        self.headers = headers
        self.started = started
    }

    /// The answer to a request that could not be read: nothing of it is known.
    static func unreadable(started: RequestStart) -> AnswerContext {
        AnswerContext(
            method: "-", route: "unmatched", minorVersion: 1, keepAlive: false, isHead: false, headers: HTTPHeaders(),
            started: started)
    }
}

/// Writes an answer's bytes and says what follows them: the next request, the connection's end, an SSE stream or a
/// WebSocket. Pure, so the keep-alive, HEAD and upgrade rules are tested without a socket.
enum AnswerEncoding {
    /// What follows an answer's bytes.
    enum Then: Sendable {
        /// The next request on the same connection.
        case next
        /// Nothing: the connection closes once the answer is out.
        case close
        /// An SSE stream, in HTTP/1.1 chunks when `chunked`; the next request follows its end when `keepAlive`.
        case stream(EventStream, chunked: Bool, keepAlive: Bool)
        /// A WebSocket session, once the 101 is out.
        case upgrade(WebSocketSession)
    }

    /// An answer written: what follows it, and the status sent.
    struct Encoded: Sendable {
        var then: Then
        var status: Int
    }

    /// Writes the answer `response` to the request `context` describes into `buffer` (emptied first); `draining`
    /// while the server shuts down, when no connection is kept alive. Returns what follows and the status sent.
    static func encode(
        _ response: HTTPResponse, _ context: AnswerContext, draining: Bool, date: [UInt8], into buffer: inout [UInt8]
    ) -> Encoded {
        buffer.removeAll(keepingCapacity: true)
        switch response.body {
        case .bytes(let body):
            return Encoded(
                then: bytes(response, body, context, draining: draining, date: date, into: &buffer),
                status: response.status)
        case .eventStream where context.isHead:
            // HEAD gets the stream's head alone (RFC 9110 §9.3.2), whatever the route: no stream starts, and the
            // connection goes on to the next request.
            let chunked = context.minorVersion >= 1
            let closeAfter = !context.keepAlive || draining
            let persistence: ResponseHead.Persistence = closeAfter ? .close : (chunked ? .implicit : .keepAlive)
            ResponseHead.write(
                status: response.status, headers: response.headers, length: chunked ? .chunked : .none,
                persistence: persistence, date: date, into: &buffer)
            return Encoded(then: closeAfter ? .close : .next, status: response.status)
        case .eventStream(let stream):
            let chunked = context.minorVersion >= 1
            ResponseHead.write(
                status: response.status, headers: response.headers, length: chunked ? .chunked : .none,
                persistence: chunked ? .implicit : .close, date: date, into: &buffer)
            return Encoded(
                then: .stream(stream, chunked: chunked, keepAlive: chunked && context.keepAlive),
                status: response.status)
        case .webSocket(let session):
            return upgrade(response, session, context, draining: draining, date: date, into: &buffer)
        }
    }

    /// An answer with its body in hand: `Content-Length` framed, without the body for HEAD or a status that has none.
    private static func bytes(
        _ response: HTTPResponse, _ body: [UInt8], _ context: AnswerContext, draining: Bool, date: [UInt8],
        into buffer: inout [UInt8]
    ) -> Then {
        var closeAfter = !context.keepAlive || draining
        var persistence: ResponseHead.Persistence =
            closeAfter ? .close : (context.minorVersion == 0 ? .keepAlive : .implicit)
        if let connection = response.headers["Connection"] {
            // The handler's own Connection field is sent as it is; a close in it closes the connection.
            persistence = .implicit
            if connection.lowercased().contains("close") { closeAfter = true }
        }
        let sendsBody = ResponseHead.hasBody(response.status)
        ResponseHead.write(
            status: response.status, headers: response.headers, length: sendsBody ? .known(body.count) : .none,
            persistence: persistence, date: date, into: &buffer)
        if sendsBody, !context.isHead { buffer.append(contentsOf: body) }
        return closeAfter ? .close : .next
    }

    /// The 101 that switches the connection to WebSocket, or the refusal of an upgrade that is not one.
    private static func upgrade(
        _ response: HTTPResponse, _ session: WebSocketSession, _ context: AnswerContext, draining: Bool,
        date: [UInt8], into buffer: inout [UInt8]
    ) -> Encoded {
        // An upgrade is a GET (RFC 6455 §4.1); a HEAD never switches the connection.
        guard !context.isHead else {
            let refusal = HTTPError.badRequest("A WebSocket upgrade is a GET request.").response
            return encode(refusal, context, draining: draining, date: date, into: &buffer)
        }
        let headers = context.headers
        guard headers["Sec-WebSocket-Version"] == "13" else {
            var error = HTTPError(
                status: 426, title: "Upgrade Required", detail: "Only WebSocket version 13 is supported.")
            error.headers.add("Sec-WebSocket-Version", "13")
            return encode(error.response, context, draining: draining, date: date, into: &buffer)
        }
        guard let key = headers["Sec-WebSocket-Key"],
            Data(base64Encoded: key.trimmingCharacters(in: .whitespaces))?.count == 16,
            headers["Connection"]?.lowercased().contains("upgrade") == true
        else {
            let refusal = HTTPError.badRequest(
                "A WebSocket upgrade needs Connection: Upgrade and a 16-byte Sec-WebSocket-Key.")
            return encode(refusal.response, context, draining: draining, date: date, into: &buffer)
        }
        var fields = HTTPHeaders()
        fields.add("Upgrade", "websocket")
        fields.add("Connection", "Upgrade")
        fields.add("Sec-WebSocket-Accept", WebSocketCodec.acceptValue(forKey: key))
        for field in response.headers { fields.add(field.name, field.value) }
        ResponseHead.write(
            status: 101, headers: fields, length: .none, persistence: .implicit, date: date, into: &buffer)
        return Encoded(then: .upgrade(session), status: 101)
    }
}
