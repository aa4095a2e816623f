/// A request whose head is in: its route, and its body as far as it has been read.
struct ReadRequest {
    var head: RequestHead
    /// The decoded path; nil when the target's path names nothing.
    var path: String?
    var resolution: Router.Resolution
    var bodyLimit: Int
    var body: [UInt8] = []
    /// Body bytes decoded so far, kept or not.
    var decoded = 0
    /// Past the body limit: the rest is read and dropped, and the answer is 413.
    var overLimit = false
    let started: RequestStart

    /// What the request gets.
    enum Dispatch {
        /// An answer decided without a handler.
        case answer(HTTPResponse, AnswerContext)
        /// Its route's handler runs.
        case run(Handler, HTTPRequest, AnswerContext)
    }

    /// A body over the limit is 413, an unknown path 404, a known path without the method 405, and a route 503 while
    /// the server drains (`draining`); otherwise the route's handler runs.
    func dispatch(draining: Bool) -> Dispatch {
        var context = AnswerContext(for: head, started: started)
        if overLimit { return .answer(HTTPError.payloadTooLarge(limit: bodyLimit).response, context) }
        switch resolution {
        case .notFound:
            return .answer(HTTPError.notFound().response, context)
        case .methodNotAllowed(let allow):
            return .answer(Router.methodNotAllowed(allow).response, context)
        case .route(let route, let parameters):
            context.route = route.pattern
            if draining {
                var response = HTTPError.unavailable(retryAfterSeconds: 1, detail: "The server is restarting.").response
                response.headers.add("Connection", "close")
                return .answer(response, context)
            }
            var request = HTTPRequest(
                method: head.method, path: path ?? "", query: HTTPParser.queryArguments(head.target),
                headers: head.headers, body: body)
            request.pathParameters = parameters
            request.routePattern = route.pattern
            return .run(route.handler, request, context)
        }
    }
}

/// Reads a connection's requests from its bytes: heads, bodies framed by length or in chunks, and the limits on both.
/// Owned by the connection's loop; pure, so every rule is tested without a socket.
struct RequestReader {
    /// What reading gave.
    enum Event {
        /// The bytes are used up; `requestLine` when the next request's line has just come in (once per request).
        case needMore(requestLine: Bool)
        /// A complete head: the connection checks it with `begin` before its body is read.
        case head(RequestHead)
        /// A complete request, body and all.
        case request(ReadRequest)
        /// The bytes are not a request: answer `status` and close.
        case unreadable(status: Int)
        /// A chunked body far past its limit: close without an answer.
        case overflow
        /// Enough requests this turn: the rest waits until the loop's other connections have had theirs.
        case yield
    }

    /// What a complete head leads to.
    enum Begin {
        /// The request is refused with this answer, and the connection closes after it.
        case refuse(HTTPResponse, AnswerContext)
        /// The body is read next; `sendContinue` when the client waits for `100 Continue` before sending it.
        case body(sendContinue: Bool)
        /// No body: the request is complete.
        case request(ReadRequest)
    }

    private enum Receive {
        case head
        case body(remaining: Int)
        case chunked(ChunkedDecoder)
    }

    /// Requests read in one turn before the loop's other connections get theirs.
    static let requestsPerTurn = 32
    /// The most of an over-limit body read and discarded to answer 413 rather than drop the connection.
    static let maxDiscardedBody = 32 * 1024 * 1024

    /// The largest request line and head accepted: longer ones are 414 and 431.
    let maxHeadBytes: Int
    private var receive = Receive.head
    private var pending: ReadRequest?
    private var requestLineNoted = false
    private var readThisTurn = 0

    init(maxHeadBytes: Int) { self.maxHeadBytes = maxHeadBytes }

    /// A new turn of the loop: up to `requestsPerTurn` heads are read before it yields.
    mutating func startTurn() { readThisTurn = 0 }

    /// Forgets the request being read (the connection is closed).
    mutating func reset() {
        receive = .head
        pending = nil
        requestLineNoted = false
    }

    /// Reads from the start of `input`: the next event, and how many bytes of `input` it used.
    mutating func read(_ input: UnsafeRawBufferPointer) -> (event: Event, consumed: Int) {
        var offset = 0
        while true {
            let rest = UnsafeRawBufferPointer(rebasing: input[offset...])
            switch receive {
            case .head:
                guard !rest.isEmpty else { return (.needMore(requestLine: false), offset) }
                if readThisTurn == Self.requestsPerTurn { return (.yield, offset) }
                let (event, consumed) = readHead(rest)
                return (event, offset + consumed)
            case .body(let remaining):
                let take = min(remaining, rest.count)
                pending?.body.append(contentsOf: UnsafeRawBufferPointer(rebasing: rest[0..<take]))
                offset += take
                guard take == remaining else {
                    receive = .body(remaining: remaining - take)
                    return (.needMore(requestLine: false), offset)
                }
                receive = .head
                if let request = pending.take() { return (.request(request), offset) }
            case .chunked(let decoder):
                guard pending != nil else {
                    receive = .head
                    continue
                }
                let (event, consumed) = readChunks(rest, decoder)
                if let event { return (event, offset + consumed) }
                offset += consumed
            }
        }
    }

    /// A head from `input`; its `consumed` count is relative to `input`, and an unreadable one uses all of it.
    private mutating func readHead(_ input: UnsafeRawBufferPointer) -> (event: Event, consumed: Int) {
        switch HTTPParser.parseHead(input, limit: maxHeadBytes) {
        case .incomplete(let requestLine):
            let first = requestLine && !requestLineNoted
            if first { requestLineNoted = true }
            return (.needMore(requestLine: first), 0)
        case .failed(let error):
            reset()
            return (.unreadable(status: error.status), input.count)
        case .complete(let head, let consumed):
            requestLineNoted = false
            readThisTurn += 1
            return (.head(head), consumed)
        }
    }

    /// Chunks of the body being read; nil with the bytes used when the body ended and the reader goes on.
    private mutating func readChunks(
        _ input: UnsafeRawBufferPointer, _ decoder: ChunkedDecoder
    ) -> (event: Event?, consumed: Int) {
        guard var request = pending.take() else { return (nil, 0) }
        var decoder = decoder
        let outcome = decoder.decode(
            input, into: &request.body, keep: !request.overLimit, decoded: &request.decoded)
        if !request.overLimit, request.decoded > request.bodyLimit {
            // Over the limit: the rest is read and thrown away, so that the client gets its 413.
            request.overLimit = true
            request.body = []
        }
        if request.decoded > max(16 * request.bodyLimit, Self.maxDiscardedBody) { return (.overflow, input.count) }
        switch outcome {
        case .needMore:
            pending = request
            receive = .chunked(decoder)
            return (.needMore(requestLine: false), input.count)
        case .malformed:
            reset()
            return (.unreadable(status: 400), input.count)
        case .done(let consumed):
            receive = .head
            return (.request(request), consumed)
        }
    }

    /// Checks the complete head `head`, received at `started`, and sets up reading its body. `refusedAtCap` when the
    /// connection was accepted over the cap and no room has been made since; `router` finds its route.
    mutating func begin(
        _ head: RequestHead, refusedAtCap: Bool, router: Router, started: RequestStart
    ) -> Begin {
        if refusedAtCap {
            var response = HTTPError.unavailable(
                retryAfterSeconds: 1, detail: "Too many connections; try again shortly."
            ).response
            response.headers.add("Connection", "close")
            return .refuse(response, AnswerContext(for: head, started: started, keepAlive: false))
        }
        // RFC 9112 §3.2: an HTTP/1.1 request carries exactly one Host.
        if head.hostCount > 1 || (head.hostCount == 0 && head.minorVersion >= 1) {
            let detail =
                head.hostCount > 1
                ? "The request has more than one Host header." : "An HTTP/1.1 request needs a Host header."
            return .refuse(
                HTTPError.badRequest(detail).response, AnswerContext(for: head, started: started, keepAlive: false))
        }
        let path = HTTPParser.decodedPath(head.target)
        let resolution = path.map { router.resolve(method: head.method, path: $0) } ?? .notFound
        var bodyLimit = Router.defaultBodyLimit
        if case .route(let route, _) = resolution { bodyLimit = route.bodyLimit }
        var request = ReadRequest(
            head: head, path: path, resolution: resolution, bodyLimit: bodyLimit, started: started)
        switch head.framing {
        case .none:
            return .request(request)
        case .length(let length):
            guard length <= bodyLimit else {
                return .refuse(
                    HTTPError.payloadTooLarge(limit: bodyLimit).response,
                    AnswerContext(for: head, started: started, keepAlive: false))
            }
            request.body.reserveCapacity(length)
            pending = request
            receive = .body(remaining: length)
        case .chunked:
            pending = request
            receive = .chunked(ChunkedDecoder())
        }
        return .body(sendContinue: head.expectsContinue)
    }
}
