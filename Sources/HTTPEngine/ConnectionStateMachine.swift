/// What a connection's rules are measured against.
struct ConnectionLimits: Sendable {
    /// The largest request head; input held while the connection cannot take it is bounded by it.
    var maxHeadBytes: Int
    /// Answers queued past this many bytes hold the client's next requests until it has read half of them.
    var maxAnswerBacklog: Int
    var deadlines: ConnectionDeadlines.Limits
    /// How long a connection answered for the last time waits for its client to finish sending.
    var linger: Duration
}

/// An SSE stream a connection carries after its head: the machine knows it by identity, and the connection lets it go
/// when it closes.
protocol ConnectionStream: AnyObject, Sendable {
    /// The stream is over (it ended, or its connection closed): it lets go of its producer.
    func released()
}

/// A WebSocket a connection carries after its 101: fed what the client sends, and told when the connection closes.
protocol ConnectionSocket: AnyObject, Sendable {
    /// Bytes from the client.
    func feed(_ bytes: [UInt8])
    /// The connection is closed.
    func connectionClosed()
}

/// The part of a connection that any thread may touch, under the connection's lock: its mode (HTTP, an SSE stream or
/// a WebSocket), the async request in flight, the bytes the socket has not taken yet, how near the connection is to
/// its end, and its deadlines. Each event is a mutating method that returns what the connection must do; the
/// connection does the socket I/O and reports what the socket did. Pure, so every rule is tested without a socket.
struct ConnectionStateMachine: Sendable {
    enum Mode: Sendable {
        case http
        /// An SSE stream: it ends with the last chunk when `chunked`, and the next request follows when `keepAlive`.
        case stream(any ConnectionStream, chunked: Bool, keepAlive: Bool)
        case webSocket(any ConnectionSocket)
    }

    /// How near the connection is to its end; it never moves back up this list.
    enum Lifecycle: Equatable {
        case open
        /// Answered for the last time: once the queue is out, the write side closes.
        case closingWhenFlushed
        /// The write side is closed; what the client still sends is read and dropped until `until`, so that it sees
        /// the last answer rather than a reset.
        case lingering(until: Duration)
        /// Cut: both directions are shut down, and the loop closes the descriptor when it sees the end.
        case shut
        /// The loop closed the descriptor.
        case closed
    }

    /// The async request in flight.
    struct InFlight {
        let serial: UInt64
        let answer: AnswerContext
        /// True until the loop has started the handler and gone on; an answer then waits here for the loop.
        var dispatching = true
        var ready: HTTPResponse?
        var answered = false
        var cancelRequested = false
        var task: Task<Void, Never>?
    }

    private(set) var mode = Mode.http
    private(set) var lifecycle = Lifecycle.open
    private(set) var deadlines: ConnectionDeadlines
    /// Bytes the socket has not taken yet.
    private(set) var outbound = OutboundQueue()
    private var inFlight: InFlight?
    /// Shut down and no longer counted against the cap, but not yet gone.
    private(set) var evicted = false
    /// Accepted over the cap with nobody to give way: its request is answered 503 unless room has been made.
    private(set) var refused = false
    /// Input arrived (or reading stopped) while the connection could not take it: the loop must serve it later.
    private var inputWaits = false
    /// More answers wait for the client than the backlog allows: its next requests wait until it has read them.
    private(set) var backlogged = false
    private var serial: UInt64 = 0
    let limits: ConnectionLimits

    init(serial: UInt64, now: Duration, limits: ConnectionLimits) {
        self.limits = limits
        deadlines = ConnectionDeadlines(serial: serial, now: now, limits: limits.deadlines)
    }

    /// False once the connection is cut or closed: nothing more reaches the socket.
    var isWritable: Bool {
        switch lifecycle {
        case .open, .closingWhenFlushed, .lingering: true
        case .shut, .closed: false
        }
    }

    // MARK: - Input (the loop)

    /// What the loop does with bytes it has read.
    enum Input {
        /// The connection is on its way out: the bytes are dropped.
        case drop
        /// The connection cannot take them now: keep up to `room` of them, and stop reading when `pauseReading`;
        /// the loop is told when to serve them.
        case hold(room: Int, pauseReading: Bool)
        /// The bytes belong to the WebSocket.
        case feed(any ConnectionSocket)
        /// Parse and answer them now.
        case serve
    }

    /// `count` bytes were read at `now`, with `buffered` bytes already waiting in the loop's input buffer.
    mutating func bytesRead(_ count: Int, buffered: Int, now: Duration) -> Input {
        deadlines.received(now: now)
        switch lifecycle {
        case .lingering, .shut, .closed: return .drop
        case .open, .closingWhenFlushed: break
        }
        switch mode {
        case .stream:
            // What a client sends on its stream waits for the stream's end (within bounds).
            let room = max(0, limits.maxHeadBytes - buffered)
            if room > 0 { inputWaits = true }
            return .hold(room: room, pauseReading: false)
        case .webSocket(let socket):
            return .feed(socket)
        case .http:
            guard inFlight == nil, !backlogged else {
                inputWaits = true
                let pause = buffered + count >= limits.maxHeadBytes + Router.defaultBodyLimit
                return .hold(room: count, pauseReading: pause)
            }
            return .serve
        }
    }

    /// What the loop does with the input it holds when its turn comes.
    enum Turn {
        /// Hand it to the WebSocket; reading resumes if it had stopped and `resumeReading`.
        case feed(any ConnectionSocket, resumeReading: Bool)
        /// A stream holds it until it ends, or a request is in flight: nothing yet.
        case wait
        /// Serve it, and resume reading if it had stopped.
        case serve
    }

    /// The loop's turn to serve the input it holds.
    mutating func inputTurn() -> Turn {
        inputWaits = false
        let busy = inFlight != nil || backlogged
        switch mode {
        case .webSocket(let socket): return .feed(socket, resumeReading: !busy)
        case .stream: return .wait
        case .http: return busy ? .wait : .serve
        }
    }

    /// Whether input waits for the loop (which must then be told to serve it); cleared by asking.
    mutating func takeWaitingInput() -> Bool {
        defer { inputWaits = false }
        return inputWaits
    }

    /// The socket the connection was upgraded to, which the bytes after the upgrade's head belong to.
    var upgradedSocket: (any ConnectionSocket)? {
        if case .webSocket(let socket) = mode { return socket }
        return nil
    }

    // MARK: - Requests (the loop)

    /// A kept-alive connection's next request line is in: its head deadline starts.
    mutating func requestLineReceived(now: Duration) {
        deadlines.requestLineReceived(now: now, limits: limits.deadlines)
    }

    /// A head is in; true when the connection was accepted over the cap and is refused unless room has been made.
    mutating func headersReceived(now: Duration) -> Bool {
        deadlines.headersReceived(now: now, limits: limits.deadlines)
        return refused
    }

    /// A synchronous handler runs now; no deadline answers it.
    mutating func dispatchedSync(now: Duration) {
        deadlines.dispatched(now: now, overrunnable: false, limits: limits.deadlines)
    }

    /// An async handler is about to start for the request `context` answers; returns its serial.
    mutating func dispatchedAsync(_ context: AnswerContext, now: Duration) -> UInt64 {
        serial += 1
        inFlight = InFlight(serial: serial, answer: context)
        deadlines.dispatched(now: now, overrunnable: true, limits: limits.deadlines)
        return serial
    }

    /// A request was dispatched; true when the next request pipelined behind it may be read at once. Otherwise input
    /// after it (`more`) waits for the loop to be told.
    mutating func requestDispatched(more: Bool) -> Bool {
        // A client that pipelines and does not read gets no more answers queued than the backlog allows.
        if outbound.count > limits.maxAnswerBacklog { backlogged = true }
        guard case .http = mode, inFlight == nil, !backlogged, lifecycle == .open else {
            if more { inputWaits = true }
            return false
        }
        return true
    }

    /// What follows starting an async handler.
    enum Started {
        /// Nothing: the request was answered and forgotten, or another one is in flight.
        case gone
        /// The handler runs on; its answer comes through `handlerFinished`.
        case running
        /// The request timed out while the handler started: cancel it.
        case cancel
        /// The handler answered while it was being started: write the answer now, and cancel the task if the
        /// deadline had passed meanwhile.
        case answer(HTTPResponse, AnswerContext, cancel: Bool)
    }

    /// The loop has started the handler for `serial` as `task` and goes on.
    mutating func handlerStarted(serial: UInt64, task: Task<Void, Never>) -> Started {
        // Moved out and back, not copied: a copy would retain and release every field of the request's context.
        guard var flight = inFlight.take() else { return .gone }
        guard flight.serial == serial else {
            inFlight = flight
            return .gone
        }
        if let ready = flight.ready { return .answer(ready, flight.answer, cancel: flight.cancelRequested) }
        flight.dispatching = false
        let cancel = flight.cancelRequested
        if !cancel { flight.task = task }
        inFlight = flight
        return cancel ? .cancel : .running
    }

    /// What an answer from a handler (or the deadline) leads to.
    enum Finished {
        /// Too late: the request was answered already, or is not the one in flight.
        case ignore
        /// The loop is still starting the handler: the answer waits for it.
        case parked
        /// Write the answer now.
        case answer(AnswerContext)
    }

    /// The async handler for `serial` answered `response` (or its deadline did): the first answer wins.
    mutating func handlerFinished(serial: UInt64, response: HTTPResponse) -> Finished {
        guard var flight = inFlight.take() else { return .ignore }
        guard flight.serial == serial, !flight.answered else {
            inFlight = flight
            return .ignore
        }
        flight.answered = true
        if flight.dispatching {
            flight.ready = response
            inFlight = flight
            return .parked
        }
        return .answer(flight.answer)
    }

    /// The handler overran its deadline (or the server is stopping): the serial to answer and the task to cancel;
    /// nil when nothing is waiting for an answer.
    mutating func handlerOverran() -> (serial: UInt64, task: Task<Void, Never>?)? {
        guard var flight = inFlight, !flight.answered else { return nil }
        flight.cancelRequested = true
        inFlight = flight
        return (flight.serial, flight.task)
    }

    /// True while a handler runs for this connection.
    var hasRequestInFlight: Bool { inFlight != nil }

    // MARK: - Answers (any thread)

    /// Starts the answer `response` to the request `context` describes: its bytes are put in `buffer`, and what
    /// follows them is returned with the status sent; nil once the connection is gone (nothing is written).
    mutating func answer(
        _ response: HTTPResponse, _ context: AnswerContext, draining: Bool, date: [UInt8], into buffer: inout [UInt8]
    ) -> AnswerEncoding.Encoded? {
        guard isWritable else { return nil }
        deadlines.answered()
        return AnswerEncoding.encode(response, context, draining: draining, date: date, into: &buffer)
    }

    /// The answer is written and the connection stays open: it waits for the next request.
    mutating func keptAlive(now: Duration) {
        deadlines.completed(now: now, limits: limits.deadlines)
    }

    /// The answer's head is written and `sink` carries the stream from here; no deadline applies until it ends.
    mutating func streamStarted(_ sink: any ConnectionStream, chunked: Bool, keepAlive: Bool) {
        mode = .stream(sink, chunked: chunked, keepAlive: keepAlive)
        deadlines.exempted(permanently: false)
    }

    /// The 101 is written and `socket` speaks WebSocket on the connection from here, without deadlines.
    mutating func upgraded(_ socket: any ConnectionSocket) {
        mode = .webSocket(socket)
        deadlines.exempted(permanently: true)
    }

    // MARK: - Writing (any thread)

    /// Where new bytes for the client go.
    enum Write: Equatable {
        /// Nothing waits before them: send them now, and report what the socket took with `sent`.
        case send
        /// Queued behind bytes the socket has not taken yet.
        case queued
        /// The connection is gone.
        case gone
    }

    /// `bytes` are to be written to the client.
    mutating func write(_ bytes: [UInt8]) -> Write {
        guard isWritable else { return .gone }
        guard outbound.isEmpty else {
            outbound.append(bytes)
            return .queued
        }
        return .send
    }

    /// The socket took `count` of `bytes` sent when `write` said so; the rest waits for room.
    mutating func sent(_ count: Int, of bytes: [UInt8]) {
        if count < bytes.count { outbound.replace(with: bytes[count...]) }
    }

    /// The socket took `count` of the queued bytes.
    mutating func flushed(_ count: Int) { outbound.removeFirst(count) }

    /// Cuts the connection (its peer is gone, it fell too far behind, or a deadline or the cap cut it): true when the
    /// socket must be shut down now, false when it was already.
    mutating func shut() -> Bool {
        guard isWritable else { return false }
        lifecycle = .shut
        outbound.removeAll()
        return true
    }

    /// No more answers on this connection: true when the write side must close now (nothing is queued); otherwise it
    /// closes once the queue is out. `now` is read only then, to start the linger.
    mutating func finishWrites(now: @autoclosure () -> Duration) -> Bool {
        switch lifecycle {
        case .open: lifecycle = .closingWhenFlushed
        case .closingWhenFlushed: break
        case .lingering, .shut, .closed: return false
        }
        guard outbound.isEmpty else { return false }
        lifecycle = .lingering(until: now() + limits.linger)
        return true
    }

    /// The socket had room and was offered what was queued: whether the write side closes now (the last answer is
    /// out) and whether the requests that waited for the client to read are served now.
    mutating func socketDrained(now: @autoclosure () -> Duration) -> (closeWriteSide: Bool, resume: Bool) {
        let close = outbound.isEmpty && lifecycle == .closingWhenFlushed && finishWrites(now: now())
        // Half the backlog read: the requests that waited are served (and reading resumes).
        let resume = backlogged && outbound.count <= limits.maxAnswerBacklog / 2
        if resume { backlogged = false }
        return (close, resume)
    }

    // MARK: - Streams and WebSockets (any thread)

    /// Whether bytes for a stream or WebSocket may be written.
    enum Outbound: Equatable {
        /// Write them.
        case write
        /// The client is further behind than the limit: it is cut (shut the socket down).
        case overflow
        /// The stream or socket is no longer the connection's, or the connection is ending.
        case gone
    }

    /// `count` bytes for the stream `sink`, whose client may be at most `limit` bytes behind.
    mutating func streamWrite(_ sink: any ConnectionStream, count: Int, limit: Int) -> Outbound {
        guard case .stream(let current, _, _) = mode, current === sink else { return .gone }
        return outboundWrite(count, limit: limit)
    }

    /// `count` bytes for the WebSocket `socket`, whose client may be at most `limit` bytes behind.
    mutating func socketWrite(_ socket: any ConnectionSocket, count: Int, limit: Int) -> Outbound {
        guard case .webSocket(let current) = mode, current === socket else { return .gone }
        return outboundWrite(count, limit: limit)
    }

    private mutating func outboundWrite(_ count: Int, limit: Int) -> Outbound {
        guard lifecycle == .open else { return .gone }
        if outbound.count + count > limit, !outbound.isEmpty {
            // Too far behind: drop this client rather than buffer without limit.
            _ = shut()
            return .overflow
        }
        return .write
    }

    /// What ending a stream leads to.
    enum StreamEnd: Equatable {
        /// The stream is not the connection's any more.
        case ignore
        /// The connection is cut: shut the socket down when `shutDown`.
        case cut(shutDown: Bool)
        /// The stream is over: write the last chunk when `lastChunk`, then finish writing when `close`.
        case ended(lastChunk: Bool, close: Bool)
    }

    /// The stream `sink` ends at `now`: cleanly, or, `failed`, by cutting the connection.
    mutating func endStream(_ sink: any ConnectionStream, failed: Bool, now: Duration) -> StreamEnd {
        guard case .stream(let current, let chunked, let keepAlive) = mode, current === sink, lifecycle != .closed
        else { return .ignore }
        if failed || lifecycle == .shut { return .cut(shutDown: shut()) }
        mode = .http
        deadlines.completed(now: now, limits: limits.deadlines)
        return .ended(lastChunk: chunked, close: !keepAlive)
    }

    // MARK: - The deadline timer and the cap (any thread)

    /// What is due at a deadline.
    enum Due: Equatable {
        /// The linger is over: the connection is cut (shut the socket down).
        case lingerOver
        /// A receive deadline passed: cut the connection.
        case close
        /// The handler overran: answer 503 and cancel it.
        case timeOut
    }

    /// What is due at `now`: a deadline's close, a handler's time-out, or the end of a linger.
    mutating func due(now: Duration) -> Due? {
        guard !evicted else { return nil }
        switch lifecycle {
        case .shut, .closed:
            return nil
        case .lingering(let until):
            return now >= until && shut() ? .lingerOver : nil
        case .open, .closingWhenFlushed:
            switch deadlines.expired(now: now, limits: limits.deadlines) {
            case .close?: return .close
            case .timeOut?: return .timeOut
            case nil: return nil
            }
        }
    }

    /// This connection's deadlines when it may give way to a newcomer over the cap: only one waiting for (or
    /// trickling) a head, and not evicted already.
    var givingWay: ConnectionDeadlines? { evicted || !deadlines.mayGiveWay ? nil : deadlines }

    /// Evicted for a newcomer over the cap: no longer counted, and no deadline acts on it.
    mutating func evict() { evicted = true }

    /// Accepted over the cap with nobody to give way.
    mutating func refuse() { refused = true }

    /// This connection's phase, or nil once it is evicted or gone.
    var phase: ConnectionDeadlines.Phase? { lifecycle == .closed || evicted ? nil : deadlines.phase }

    /// Bytes queued for the client, and whether its requests wait for it to read them.
    var backlog: (bytes: Int, waiting: Bool) { (outbound.count, backlogged) }

    // MARK: - Closing (the loop)

    /// The loop closed the descriptor: what the connection held, for it to let go of.
    mutating func closed() -> (mode: Mode, task: Task<Void, Never>?, wasEvicted: Bool) {
        lifecycle = .closed
        let held = (mode, inFlight?.task, evicted)
        inFlight = nil
        outbound.removeAll()
        mode = .http
        return held
    }
}
