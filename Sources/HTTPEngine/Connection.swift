import Foundation
import Synchronization
import CEpoll

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
    var started: ContinuousClock.Instant

    /// The answer to a request that could not be read: nothing of it is known.
    static func unreadable(started: ContinuousClock.Instant) -> AnswerContext {
        AnswerContext(
            method: "-", route: "unmatched", minorVersion: 1, keepAlive: false, isHead: false, headers: HTTPHeaders(),
            started: started)
    }
}

/// One client connection: its request parsing, handler dispatch and answers, and, once a stream or
/// WebSocket takes it over, the socket under those.
///
/// Reading, parsing and closing happen on the connection's loop only. Writing may happen on any thread
/// (an async handler's task answering, a channel publishing to a stream) under `lock`, which also guards
/// the connection's mode, the request in flight and the deadlines. The descriptor is closed only on the
/// loop, after `closed` is set under the lock, so no other thread ever writes to a reused number.
final class Connection: @unchecked Sendable {
    enum Mode {
        case http
        case stream(StreamSink)
        case webSocket(UpgradedSocket)
    }

    /// The async request in flight.
    private struct InFlight {
        let serial: UInt64
        let answer: AnswerContext
        /// True until the loop has started the handler and gone on; an answer then waits here for the loop.
        var dispatching = true
        var ready: HTTPResponse?
        var answered = false
        var cancelRequested = false
        var task: Task<Void, Never>?
    }

    /// What follows an answer, done once the lock is let go.
    private enum After {
        case none
        case stream(StreamSink, EventStream)
        case webSocket(UpgradedSocket, WebSocketSession, AsyncStream<WebSocketMessage>)
    }

    /// A request whose head is in and whose body is being read (loop thread only).
    private struct Pending {
        var head: RequestHead
        var path: String?
        var resolution: Router.Resolution
        var bodyLimit: Int
        var body: [UInt8] = []
        var decoded = 0
        var overLimit = false
        let started: ContinuousClock.Instant
    }

    private enum Receive {
        case head
        case body(remaining: Int)
        case chunked(ChunkedDecoder)
    }

    let fd: Int32
    let token: UInt64
    unowned let loop: EventLoop
    let server: ServerCore
    let lock = Lock()

    // Under `lock`.
    private(set) var mode = Mode.http
    private var inFlight: InFlight?
    private(set) var deadlines: ConnectionDeadlines
    /// Shut down and no longer counted against the cap, but not yet gone.
    var evicted = false
    /// Accepted over the cap with nobody to give way: its request is answered 503 unless room has been made.
    var refused = false
    private var closed = false
    private var shut = false
    private var lingering = false
    private var lingerDeadline = Duration.zero
    private var closeWhenFlushed = false
    /// Bytes the socket has not taken yet, from `outStart` on.
    private var out: [UInt8] = []
    private var outStart = 0
    /// Input arrived (or reading stopped) while the connection could not take it: the loop must serve it later.
    private var inputWaits = false
    /// More answers wait for the client than `maxAnswerBacklog`: its next requests wait until it has read them.
    private var backlogged = false
    private var serial: UInt64 = 0

    // Loop thread only.
    private var receive = Receive.head
    private var pending: Pending?
    private var inbuf: [UInt8] = []
    private var requestLineNoted = false
    private var readPaused = false
    private var closedOnLoop = false

    /// Requests served in one turn before the loop's other connections get theirs.
    private static let requestsPerTurn = 32
    /// How long a connection that has been answered for the last time waits for its client to finish sending.
    static let lingerTime: Duration = .seconds(5)

    init(fd: Int32, token: UInt64, loop: EventLoop, server: ServerCore, serial: UInt64, now: Duration) {
        self.fd = fd
        self.token = token
        self.loop = loop
        self.server = server
        deadlines = ConnectionDeadlines(serial: serial, now: now, limits: server.limits)
    }

    // MARK: - Events (loop thread)

    func handle(events: UInt32) {
        if events & EPOLLOUT.rawValue != 0 { writable() }
        if events & (EPOLLIN.rawValue | EPOLLRDHUP.rawValue | EPOLLHUP.rawValue | EPOLLERR.rawValue) != 0 {
            readable(toTheEnd: events & (EPOLLRDHUP.rawValue | EPOLLHUP.rawValue | EPOLLERR.rawValue) != 0)
        }
    }

    /// Reads what the socket holds. A short read means it is drained (a later arrival brings a new edge), unless the
    /// peer has also hung up, when it reads on to see the end.
    private func readable(toTheEnd: Bool) {
        let scratch = loop.scratch
        while !closedOnLoop, !readPaused {
            let n = recv(fd, scratch.baseAddress, scratch.count, 0)
            if n > 0 {
                received(UnsafeRawBufferPointer(rebasing: scratch[0..<n]))
                if n < scratch.count, !toTheEnd { return }
                continue
            }
            if n == 0 { closeNow(); return }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return
            default: closeNow(); return
            }
        }
    }

    private func received(_ bytes: UnsafeRawBufferPointer) {
        let limit = server.configuration.maxHeadBytes
        lock.lock()
        deadlines.received(now: loop.now)
        if lingering || shut {
            lock.unlock()
            return
        }
        switch mode {
        case .stream:
            // What a client sends on its stream waits for the stream's end (within bounds).
            if inbuf.count < limit { inbuf.append(contentsOf: bytes.prefix(limit - inbuf.count)); inputWaits = true }
            lock.unlock()
            return
        case .webSocket(let socket):
            lock.unlock()
            socket.feed(Array(bytes))
            return
        case .http:
            if inFlight != nil || backlogged {
                inbuf.append(contentsOf: bytes)
                inputWaits = true
                if inbuf.count >= limit + Router.defaultBodyLimit { readPaused = true }
                lock.unlock()
                return
            }
        }
        lock.unlock()
        if inbuf.isEmpty {
            let used = serve(bytes)
            if used < bytes.count { keepLeftover(UnsafeRawBufferPointer(rebasing: bytes[used...])) }
        } else {
            inbuf.append(contentsOf: bytes)
            serveBuffered()
        }
    }

    /// Serves what waits in the input buffer, and reads again if reading had stopped (loop thread).
    func drive() {
        guard !closedOnLoop else { return }
        lock.lock()
        inputWaits = false
        let mode = self.mode, busy = inFlight != nil || backlogged
        lock.unlock()
        switch mode {
        case .webSocket(let socket):
            if !inbuf.isEmpty {
                let bytes = inbuf
                inbuf = []
                socket.feed(bytes)
            }
        case .stream:
            return
        case .http:
            guard !busy else { return }
            if !inbuf.isEmpty { serveBuffered() }
        }
        if readPaused, !busy {
            readPaused = false
            readable(toTheEnd: true)
        }
    }

    private func serveBuffered() {
        let used = inbuf.withUnsafeBytes { serve($0) }
        if used >= inbuf.count {
            inbuf = []
        } else if used > 0 {
            inbuf.removeFirst(used)
        }
        handOverLeftover()
    }

    private func keepLeftover(_ bytes: UnsafeRawBufferPointer) {
        inbuf.append(contentsOf: bytes)
        handOverLeftover()
    }

    /// Bytes after an upgrade's head belong to the WebSocket.
    private func handOverLeftover() {
        guard !inbuf.isEmpty else { return }
        lock.lock()
        let mode = self.mode
        lock.unlock()
        if case .webSocket(let socket) = mode {
            let bytes = inbuf
            inbuf = []
            socket.feed(bytes)
        }
    }

    // MARK: - Requests (loop thread)

    /// Parses and answers requests from `input` while the connection can take them; returns the bytes used.
    private func serve(_ input: UnsafeRawBufferPointer) -> Int {
        var offset = 0, served = 0
        let limit = server.configuration.maxHeadBytes
        while true {
            switch receive {
            case .head:
                guard offset < input.count else { return offset }
                if served == Self.requestsPerTurn {
                    loop.serveLater(self)
                    return offset
                }
                switch HTTPParser.parseHead(UnsafeRawBufferPointer(rebasing: input[offset...]), limit: limit) {
                case .incomplete(let requestLine):
                    if requestLine, !requestLineNoted {
                        requestLineNoted = true
                        let now = loop.now, limits = server.limits
                        lock.withLock { deadlines.requestLineReceived(now: now, limits: limits) }
                    }
                    return offset
                case .failed(let error):
                    refuseUnreadable(error.status)
                    return input.count
                case .complete(let head, let consumed):
                    offset += consumed
                    requestLineNoted = false
                    served += 1
                    guard begin(head) else { return input.count }
                    if case .head = receive {
                        guard complete(more: offset < input.count) else { return offset }
                    }
                }
            case .body(let remaining):
                let take = min(remaining, input.count - offset)
                pending?.body.append(contentsOf: UnsafeRawBufferPointer(rebasing: input[offset..<(offset + take)]))
                offset += take
                guard take == remaining else {
                    receive = .body(remaining: remaining - take)
                    return offset
                }
                receive = .head
                guard complete(more: offset < input.count) else { return offset }
            case .chunked(var decoder):
                guard var request = pending else { receive = .head; continue }
                pending = nil
                let outcome = decoder.decode(
                    UnsafeRawBufferPointer(rebasing: input[offset...]), into: &request.body,
                    keep: !request.overLimit, decoded: &request.decoded)
                if !request.overLimit, request.decoded > request.bodyLimit {
                    // Over the limit: the rest is read and thrown away, so that the client gets its 413.
                    request.overLimit = true
                    request.body = []
                }
                if request.decoded > max(16 * request.bodyLimit, ServerCore.maxDiscardedBody) {
                    closeNow()
                    return input.count
                }
                pending = request
                switch outcome {
                case .needMore:
                    receive = .chunked(decoder)
                    return input.count
                case .malformed:
                    receive = .head
                    refuseUnreadable(400)
                    return input.count
                case .done(let consumed):
                    offset += consumed
                    receive = .head
                    guard complete(more: offset < input.count) else { return offset }
                }
            }
        }
    }

    /// A complete head: checks it and sets up reading its body. False when the connection is answered for the last
    /// time.
    private func begin(_ head: RequestHead) -> Bool {
        let started = ContinuousClock.now, now = loop.now, limits = server.limits
        let refusedNow = lock.withLock { () -> Bool in
            deadlines.headersReceived(now: now, limits: limits)
            return refused
        }
        if refusedNow, server.openConnectionCount > server.budget.connectionCap {
            var response = HTTPError.unavailable(
                retryAfterSeconds: 1, detail: "Too many connections; try again shortly."
            ).response
            response.headers.add("Connection", "close")
            answer(response, context(for: head, route: nil, started: started, keepAlive: false))
            return false
        }
        // RFC 9112 §3.2: an HTTP/1.1 request carries exactly one Host.
        if head.hostCount > 1 || (head.hostCount == 0 && head.minorVersion >= 1) {
            let detail =
                head.hostCount > 1
                ? "The request has more than one Host header." : "An HTTP/1.1 request needs a Host header."
            answer(
                HTTPError.badRequest(detail).response,
                context(for: head, route: nil, started: started, keepAlive: false))
            return false
        }
        let path = HTTPParser.decodedPath(head.target)
        let resolution = path.map { server.router.resolve(method: head.method, path: $0) } ?? .notFound
        var bodyLimit = Router.defaultBodyLimit
        if case .route(let route, _) = resolution { bodyLimit = route.bodyLimit }
        pending = Pending(head: head, path: path, resolution: resolution, bodyLimit: bodyLimit, started: started)
        switch head.framing {
        case .none:
            receive = .head
        case .length(let length):
            if length > bodyLimit {
                pending = nil
                answer(
                    HTTPError.payloadTooLarge(limit: bodyLimit).response,
                    context(for: head, route: nil, started: started, keepAlive: false))
                return false
            }
            pending?.body.reserveCapacity(length)
            receive = .body(remaining: length)
            if head.expectsContinue { sendContinue() }
        case .chunked:
            receive = .chunked(ChunkedDecoder())
            if head.expectsContinue { sendContinue() }
        }
        return true
    }

    private func sendContinue() {
        lock.withLock { _ = sendLocked(ResponseHead.continueLine) }
    }

    private func context(
        for head: RequestHead, route: String?, started: ContinuousClock.Instant, keepAlive: Bool? = nil
    ) -> AnswerContext {
        AnswerContext(
            method: head.method, route: route ?? "unmatched", minorVersion: head.minorVersion,
            keepAlive: keepAlive ?? head.keepAlive, isHead: head.method == "HEAD", headers: head.headers,
            started: started)
    }

    /// The body is in: dispatches the request. True when the connection can take the next request at once; otherwise
    /// input after it (`more`) waits for the loop to be told.
    private func complete(more: Bool) -> Bool {
        guard let request = pending else { return true }
        pending = nil
        dispatch(request)
        lock.lock()
        defer { lock.unlock() }
        // A client that pipelines and does not read gets no more answers queued than the backlog allows.
        if queuedLocked > server.configuration.maxAnswerBacklog { backlogged = true }
        guard case .http = mode, inFlight == nil, !backlogged, !closeWhenFlushed, !lingering, !shut, !closed else {
            if more { inputWaits = true }
            return false
        }
        return true
    }

    private func dispatch(_ pending: Pending) {
        let head = pending.head
        var context = context(for: head, route: nil, started: pending.started)
        if pending.overLimit {
            answer(HTTPError.payloadTooLarge(limit: pending.bodyLimit).response, context)
            return
        }
        switch pending.resolution {
        case .notFound:
            answer(HTTPError.notFound().response, context)
        case .methodNotAllowed(let allow):
            answer(Router.methodNotAllowed(allow).response, context)
        case .route(let route, let parameters):
            context.route = route.pattern
            if server.isDraining {
                var response = HTTPError.unavailable(retryAfterSeconds: 1, detail: "The server is restarting.").response
                response.headers.add("Connection", "close")
                answer(response, context)
                return
            }
            var request = HTTPRequest(
                method: head.method, path: pending.path ?? "", query: HTTPParser.queryArguments(head.target),
                headers: head.headers, body: pending.body)
            request.pathParameters = parameters
            request.routePattern = route.pattern
            let now = loop.now, limits = server.limits
            switch route.handler {
            case .sync(let handle):
                lock.withLock { deadlines.dispatched(now: now, overrunnable: false, limits: limits) }
                answer(Router.run { try handle(request) }, context)
            case .async(let handle):
                guard server.admit() else {
                    answer(
                        HTTPError.unavailable(retryAfterSeconds: 1, detail: "The server is busy; try again shortly.")
                            .response, context)
                    return
                }
                let serial = lock.withLock { () -> UInt64 in
                    self.serial += 1
                    inFlight = InFlight(serial: self.serial, answer: context)
                    deadlines.dispatched(now: now, overrunnable: true, limits: limits)
                    return self.serial
                }
                let server = self.server, request = request
                let run: @Sendable () async -> Void = {
                    let response: HTTPResponse
                    do { response = try await handle(request) } catch { response = Router.answer(for: error) }
                    server.dismiss()
                    self.complete(serial: serial, with: response)
                }
                // The handler starts here, on the loop's thread, and moves to Swift's executor only when it first
                // suspends: one that answers without waiting (a read from memory, a refusal) is answered at once.
                let task: Task<Void, Never>
                if #available(macOS 26.0, iOS 26.0, *) {
                    task = Task.immediate(operation: run)
                } else {
                    task = Task(operation: run)
                }
                lock.lock()
                // Moved out and back, not copied: a copy would retain and release every field of the request's context.
                guard var flight = inFlight.take() else {
                    lock.unlock()
                    return
                }
                guard flight.serial == serial else {
                    inFlight = flight
                    lock.unlock()
                    return
                }
                if let ready = flight.ready {
                    let (after, status) = respondLocked(ready, flight.answer, into: &loop.output)
                    lock.unlock()
                    finish(after, status: status, flight.answer)
                    if flight.cancelRequested { task.cancel() }
                    return
                }
                flight.dispatching = false
                let cancel = flight.cancelRequested
                if !cancel { flight.task = task }
                inFlight = flight
                lock.unlock()
                if cancel { task.cancel() }
            }
        }
    }

    /// Answers now, from the loop.
    private func answer(_ response: HTTPResponse, _ context: AnswerContext) {
        lock.lock()
        let (after, status) = respondLocked(response, context, into: &loop.output)
        lock.unlock()
        finish(after, status: status, context)
    }

    /// A request that cannot be read is answered with its problem and the connection closes.
    private func refuseUnreadable(_ status: Int) {
        pending = nil
        receive = .head
        answer(HTTPError.protocolError(status: status).response, .unreadable(started: ContinuousClock.now))
    }

    // MARK: - Answers (any thread)

    /// The async handler's answer (or the deadline's): the first one for `serial` wins.
    func complete(serial: UInt64, with response: HTTPResponse) {
        lock.lock()
        guard var flight = inFlight.take() else {
            lock.unlock()
            return
        }
        guard flight.serial == serial, !flight.answered else {
            inFlight = flight
            lock.unlock()
            return
        }
        flight.answered = true
        if flight.dispatching {
            flight.ready = response
            inFlight = flight
            lock.unlock()
            return
        }
        var buffer: [UInt8] = []
        let (after, status) = respondLocked(response, flight.answer, into: &buffer)
        let wake = inputWaits
        inputWaits = false
        lock.unlock()
        finish(after, status: status, flight.answer)
        if wake { loop.post { [self] in drive() } }
    }

    /// The handler overran its deadline (or the server is stopping): answer `response` now, and cancel the handler.
    func timeOut(_ response: HTTPResponse) {
        let (serial, task) = lock.withLock { () -> (UInt64?, Task<Void, Never>?) in
            guard var flight = inFlight, !flight.answered else { return (nil, nil) }
            flight.cancelRequested = true
            inFlight = flight
            return (flight.serial, flight.task)
        }
        guard let serial else { return }
        complete(serial: serial, with: response)
        task?.cancel()
    }

    /// True while a handler runs for this connection.
    var hasRequestInFlight: Bool { lock.withLock { inFlight != nil } }

    /// Writes `response`; under `lock`. Returns what must follow once the lock is let go, and the status sent.
    private func respondLocked(
        _ response: HTTPResponse, _ context: AnswerContext, into buffer: inout [UInt8]
    ) -> (After, Int) {
        guard !closed, !shut else { return (.none, response.status) }
        deadlines.answered()
        buffer.removeAll(keepingCapacity: true)
        let date = loop.dates.current
        switch response.body {
        case .bytes(let body):
            var closeAfter = !context.keepAlive || server.isDraining
            var persistence: ResponseHead.Persistence =
                closeAfter ? .close : (context.minorVersion == 0 ? .keepAlive : .implicit)
            if let connection = response.headers["Connection"] {
                persistence = .implicit
                if connection.lowercased().contains("close") { closeAfter = true }
            }
            let sendsBody = ResponseHead.hasBody(response.status)
            ResponseHead.write(
                status: response.status, headers: response.headers, length: sendsBody ? .known(body.count) : .none,
                persistence: persistence, date: date, into: &buffer)
            if sendsBody, !context.isHead { buffer.append(contentsOf: body) }
            _ = sendLocked(buffer)
            if closeAfter {
                finishWritesLocked()
            } else {
                deadlines.completed(now: server.elapsed(), limits: server.limits)
            }
            return (.none, response.status)
        case .eventStream where context.isHead:
            // HEAD gets the stream's head alone (RFC 9110 §9.3.2), whatever the route: no stream starts, and the
            // connection goes on to the next request.
            let chunked = context.minorVersion >= 1
            let closeAfter = !context.keepAlive || server.isDraining
            let persistence: ResponseHead.Persistence = closeAfter ? .close : (chunked ? .implicit : .keepAlive)
            ResponseHead.write(
                status: response.status, headers: response.headers, length: chunked ? .chunked : .none,
                persistence: persistence, date: date, into: &buffer)
            _ = sendLocked(buffer)
            if closeAfter {
                finishWritesLocked()
            } else {
                deadlines.completed(now: server.elapsed(), limits: server.limits)
            }
            return (.none, response.status)
        case .eventStream(let stream):
            let chunked = context.minorVersion >= 1
            let sink = StreamSink(connection: self, chunked: chunked, keepAlive: chunked && context.keepAlive)
            ResponseHead.write(
                status: response.status, headers: response.headers, length: chunked ? .chunked : .none,
                persistence: chunked ? .implicit : .close, date: date, into: &buffer)
            _ = sendLocked(buffer)
            mode = .stream(sink)
            deadlines.exempted(permanently: false)
            return (.stream(sink, stream), response.status)
        case .webSocket where context.isHead:
            // An upgrade is a GET (RFC 6455 §4.1); a HEAD never switches the connection.
            let refusal = HTTPError.badRequest("A WebSocket upgrade is a GET request.").response
            return respondLocked(refusal, context, into: &buffer)
        case .webSocket(let session):
            let headers = context.headers
            guard headers["Sec-WebSocket-Version"] == "13" else {
                var error = HTTPError(
                    status: 426, title: "Upgrade Required", detail: "Only WebSocket version 13 is supported.")
                error.headers.add("Sec-WebSocket-Version", "13")
                return respondLocked(error.response, context, into: &buffer)
            }
            guard let key = headers["Sec-WebSocket-Key"],
                Data(base64Encoded: key.trimmingCharacters(in: .whitespaces))?.count == 16,
                headers["Connection"]?.lowercased().contains("upgrade") == true
            else {
                return respondLocked(
                    HTTPError.badRequest(
                        "A WebSocket upgrade needs Connection: Upgrade and a 16-byte Sec-WebSocket-Key."
                    ).response,
                    context, into: &buffer)
            }
            var fields = HTTPHeaders()
            fields.add("Upgrade", "websocket")
            fields.add("Connection", "Upgrade")
            fields.add("Sec-WebSocket-Accept", WebSocketCodec.acceptValue(forKey: key))
            for field in response.headers { fields.add(field.name, field.value) }
            ResponseHead.write(
                status: 101, headers: fields, length: .none, persistence: .implicit, date: date, into: &buffer)
            _ = sendLocked(buffer)
            let (messages, continuation) = AsyncStream<WebSocketMessage>.makeStream(
                bufferingPolicy: .bufferingNewest(1024))
            let socket = UpgradedSocket(
                connection: self, configuration: server.configuration, clock: server.clock, continuation: continuation)
            mode = .webSocket(socket)
            deadlines.exempted(permanently: true)
            return (.webSocket(socket, session, messages), 101)
        }
    }

    /// Counts the answer and starts what follows it; no lock held.
    private func finish(_ after: After, status: Int, _ context: AnswerContext) {
        server.metrics.recordRequest(
            route: context.route, method: context.method, status: status,
            seconds: Self.seconds(since: context.started))
        switch after {
        case .none:
            break
        case .stream(let sink, let stream):
            server.streamOpened(sink)
            sink.start(producer: stream.start(sink: sink, retryMilliseconds: server.configuration.sseRetryMilliseconds))
            if server.isDraining { sink.finish() }
        case .webSocket(let socket, let session, let messages):
            server.webSocketOpened(socket, session: session, messages: messages)
        }
    }

    private static func seconds(since start: ContinuousClock.Instant) -> Double {
        let d = ContinuousClock.now - start
        return Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
    }

    // MARK: - Writing (any thread, under `lock`)

    /// Sends `bytes` after whatever is still queued; false once the connection is gone.
    private func sendLocked(_ bytes: [UInt8]) -> Bool {
        guard !closed, !shut else { return false }
        if out.count > outStart {
            out.append(contentsOf: bytes)
            return true
        }
        let sent = bytes.withUnsafeBytes { sendNow($0) }
        guard sent >= 0 else {
            shutLocked()
            return false
        }
        if sent < bytes.count {
            out = Array(bytes[sent...])
            outStart = 0
        }
        return true
    }

    /// What `send` took of `bytes` before the socket filled up; -1 when the peer is gone.
    private func sendNow(_ bytes: UnsafeRawBufferPointer) -> Int {
        var sent = 0
        while sent < bytes.count {
            let n = Glibc.send(fd, bytes.baseAddress! + sent, bytes.count - sent, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
            if n > 0 { sent += n; continue }
            if n < 0, errno == EINTR { continue }
            if n < 0, errno == EAGAIN || errno == EWOULDBLOCK { return sent }
            return -1
        }
        return sent
    }

    /// Bytes queued and not yet taken by the socket.
    private var queuedLocked: Int { out.count - outStart }

    private func flushLocked() {
        guard queuedLocked > 0, !closed, !shut else { return }
        let sent = out.withUnsafeBytes { sendNow(UnsafeRawBufferPointer(rebasing: $0[outStart...])) }
        guard sent >= 0 else {
            shutLocked()
            return
        }
        outStart += sent
        if outStart == out.count {
            out = []
            outStart = 0
        }
    }

    /// No more answers on this connection: once what is queued is out, the write side closes and the client's
    /// remaining bytes are read and dropped until it closes too (or the linger time passes), so that it sees the
    /// last answer rather than a reset.
    private func finishWritesLocked() {
        closeWhenFlushed = true
        guard queuedLocked == 0, !closed, !shut, !lingering else { return }
        lingering = true
        lingerDeadline = server.elapsed() + Self.lingerTime
        _ = Glibc.shutdown(fd, Int32(SHUT_WR))
    }

    /// Ends the connection abruptly: the loop sees the end and closes it.
    private func shutLocked() {
        guard !closed, !shut else { return }
        shut = true
        out = []
        outStart = 0
        _ = Glibc.shutdown(fd, Int32(SHUT_RDWR))
    }

    /// Ends the connection abruptly from any thread (a deadline, the cap, a stream that fell behind).
    func cut() { lock.withLock { shutLocked() } }

    private func writable() {
        lock.lock()
        flushLocked()
        if queuedLocked == 0, closeWhenFlushed { finishWritesLocked() }
        // Half the backlog read: the requests that waited are served (and reading resumes).
        let resume = backlogged && queuedLocked <= server.configuration.maxAnswerBacklog / 2
        if resume { backlogged = false }
        lock.unlock()
        if resume { drive() }
    }

    /// Bytes queued for the client now, and whether its requests wait for it to read them (for tests).
    var backlog: (bytes: Int, waiting: Bool) { lock.withLock { (queuedLocked, backlogged) } }

    // MARK: - Streams and WebSockets (any thread)

    /// How a write to a stream or WebSocket went.
    enum StreamWrite { case written, overflow, gone }

    /// Writes to the stream `sink` holds, dropping a client further behind than `limit` bytes.
    func streamWrite(_ sink: StreamSink, _ bytes: [UInt8], limit: Int) -> StreamWrite {
        lock.lock()
        defer { lock.unlock() }
        guard case .stream(let current) = mode, current === sink else { return .gone }
        return writeLocked(bytes, limit: limit)
    }

    /// Writes to the WebSocket `socket` holds, dropping a client further behind than `limit` bytes.
    func socketWrite(_ socket: UpgradedSocket, _ bytes: [UInt8], limit: Int) -> StreamWrite {
        lock.lock()
        defer { lock.unlock() }
        guard case .webSocket(let current) = mode, current === socket else { return .gone }
        return writeLocked(bytes, limit: limit)
    }

    private func writeLocked(_ bytes: [UInt8], limit: Int) -> StreamWrite {
        guard !closed, !shut, !closeWhenFlushed else { return .gone }
        if queuedLocked + bytes.count > limit, queuedLocked > 0 {
            // Too far behind: drop this client rather than buffer without limit.
            shutLocked()
            return .overflow
        }
        return sendLocked(bytes) ? .written : .gone
    }

    /// The WebSocket is done: close once what is queued is out.
    func closeAfterFlush() { lock.withLock { finishWritesLocked() } }

    /// Ends the stream `sink` holds: cleanly (the last chunk, then keep-alive) or, `failed`, by cutting the connection.
    func endStream(_ sink: StreamSink, failed: Bool) {
        lock.lock()
        guard case .stream(let current) = mode, current === sink, !closed else {
            lock.unlock()
            return
        }
        if failed || shut {
            shutLocked()
            lock.unlock()
            return
        }
        mode = .http
        deadlines.completed(now: server.elapsed(), limits: server.limits)
        if sink.chunked { _ = sendLocked(Self.lastChunk) }
        if !sink.keepAlive { finishWritesLocked() }
        let wake = inputWaits
        inputWaits = false
        lock.unlock()
        sink.released()
        if wake { loop.post { [self] in drive() } }
    }

    private static let lastChunk = Array("0\r\n\r\n".utf8)

    // MARK: - The deadline timer and the cap (any thread)

    /// What is due at `now`: a deadline's close, a handler's time-out, or the end of a linger.
    func expire(now: Duration, limits: ConnectionDeadlines.Limits) -> ConnectionDeadlines.Expiry? {
        lock.lock()
        defer { lock.unlock() }
        guard !closed, !shut, !evicted else { return nil }
        if lingering {
            if now >= lingerDeadline { shutLocked() }
            return nil
        }
        return deadlines.expired(now: now, limits: limits)
    }

    /// This connection's phase, or nil once it is evicted or gone.
    var phase: ConnectionDeadlines.Phase? {
        lock.withLock { closed || evicted ? nil : deadlines.phase }
    }

    // MARK: - Closing (loop thread)

    /// Closes the socket and lets go of everything the connection held.
    func closeNow() {
        guard !closedOnLoop else { return }
        closedOnLoop = true
        lock.lock()
        closed = true
        let mode = self.mode, task = inFlight?.task, wasEvicted = evicted
        inFlight = nil
        out = []
        self.mode = .http
        lock.unlock()
        Glibc.close(fd)
        inbuf = []
        pending = nil
        loop.release(token: token)
        server.connectionClosed(self, wasEvicted: wasEvicted)
        task?.cancel()
        switch mode {
        case .http: break
        case .stream(let sink): sink.released()
        case .webSocket(let socket): socket.connectionClosed()
        }
    }
}
