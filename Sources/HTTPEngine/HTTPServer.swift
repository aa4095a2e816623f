import Foundation
import Synchronization
import CMicroHTTPD
import CMicroHTTPDErrors
#if canImport(Glibc)
import Glibc
#endif

/// Settings for `HTTPServer`; the defaults suit production.
public struct HTTPServerConfiguration: Sendable {
    /// IPv4 address to listen on.
    public var host = "127.0.0.1"
    /// TCP port; 0 picks a free one (read it back from `HTTPServer.port`).
    public var port: UInt16 = 8080
    /// Threads in libmicrohttpd's pool.
    public var threads = max(1, ProcessInfo.processInfo.activeProcessorCount)
    /// Open connections beyond this get 503 with `Retry-After` and are closed; before that, a newcomer
    /// over the cap makes the connection that has waited longest for its request head give way.
    public var connectionLimit = 20_000
    /// Seconds a connection may sit idle before it is closed, and at most wait (however slowly bytes
    /// trickle in) for its next request line after an answer; streams are exempt.
    public var idleTimeoutSeconds: UInt32 = 30
    /// How long a request line and headers may take to arrive, from the accept (or from the request
    /// line on a kept-alive connection); past it the connection is closed.
    public var headerTimeout: Duration = .seconds(10)
    /// How long a request body may take to arrive after its headers; past it the connection is closed.
    public var bodyTimeout: Duration = .seconds(30)
    /// How long an async handler may run before the client gets 503 with `Retry-After` and the handler
    /// is cancelled; a stream's deadline ends once its handler has returned the stream.
    public var requestDeadline: Duration = .seconds(30)
    /// Async handlers running at once beyond this get 503 with `Retry-After`.
    public var maxInFlight = 4_096
    /// Per-connection memory pool for headers and buffers, in bytes.
    public var connectionMemoryLimit = 8 * 1024
    /// How often an idle SSE stream gets a heartbeat comment.
    public var heartbeatInterval: Duration = .seconds(15)
    /// The `retry:` sent at the start of every SSE stream.
    public var sseRetryMilliseconds = 3_000
    /// An SSE client further behind than this many bytes is disconnected.
    public var maxStreamBuffer = 256 * 1024
    /// Largest WebSocket message accepted; larger ones close with 1009.
    public var maxWebSocketMessage = 64 * 1024
    /// A WebSocket client further behind than this many bytes is disconnected.
    public var maxWebSocketOutbound = 1024 * 1024
    /// How long a WebSocket close waits for the client's own close frame before cutting the connection.
    public var webSocketCloseTimeout: Duration = .seconds(2)
    /// How long shutdown waits for in-flight requests and streams.
    public var shutdownGrace: Duration = .seconds(10)

    public init() {}
}

/// Errors starting the server.
public enum HTTPServerError: Error, CustomStringConvertible {
    case cannotStart(host: String, port: UInt16)
    public var description: String {
        switch self {
        case .cannotStart(let host, let port): "could not listen on \(host):\(port) (in use, or no permission)"
        }
    }
}

/// An HTTP/1.1 server on libmicrohttpd: async handlers via suspend/resume, SSE, WebSocket, metrics.
public final class HTTPServer: @unchecked Sendable {
    public let configuration: HTTPServerConfiguration
    public let metrics: MetricsRegistry
    private let router: Router
    private let clock: any Clock<Duration>
    private var daemon: OpaquePointer?
    private let reactor = SocketReactor()
    private let inFlight = Atomic<Int>(0)
    private let openStreams = Atomic<Int>(0)
    private let draining = Atomic<Bool>(false)
    /// Every open connection's phase and deadline; `shutdown(2)` of an evicted or expired socket happens
    /// under this lock, before libmicrohttpd's close notice (which takes it too) can free the descriptor.
    private let connections: Mutex<ConnectionTable<RequestContext>>
    /// Time on `clock` since the server was made.
    private let elapsed: @Sendable () -> Duration
    private let streams = Mutex<[ObjectIdentifier: MHDEventSink]>([:])
    private var listenPort: UInt16 = 0
    private var timer: Task<Void, Never>?
    /// How often the timer sends due heartbeats and enforces deadlines.
    static let timerTick: Duration = .milliseconds(500)

    /// A server for `router`; `clock` paces SSE heartbeats, the receive and request deadlines, and times
    /// WebSocket close handshakes.
    public init(router: Router, configuration: HTTPServerConfiguration = HTTPServerConfiguration(),
                metrics: MetricsRegistry = MetricsRegistry(), clock: any Clock<Duration> = ContinuousClock()) {
        self.router = router
        self.configuration = configuration
        self.metrics = metrics
        self.clock = clock
        self.elapsed = Self.elapsedReader(clock)
        nextHeartbeat = configuration.heartbeatInterval
        connections = Mutex(ConnectionTable(limits: .init(header: configuration.headerTimeout, body: configuration.bodyTimeout,
                                                          idle: .seconds(Int(configuration.idleTimeoutSeconds)),
                                                          request: configuration.requestDeadline)))
        metrics.gauge("enroute_open_connections", help: "Client connections open now.") { [weak self] in
            Double(self?.connections.withLock { $0.liveCount } ?? 0)
        }
        metrics.gauge("enroute_open_sse_streams", help: "Server-Sent Event streams open now.") { [weak self] in
            Double(self?.openStreams.load(ordering: .relaxed) ?? 0)
        }
        metrics.gauge("enroute_open_websockets", help: "WebSocket sessions open now.") { [reactor] in Double(reactor.count) }
        metrics.gauge("enroute_requests_in_flight", help: "Async handlers running now.") { [weak self] in
            Double(self?.inFlight.load(ordering: .relaxed) ?? 0)
        }
    }

    deinit {
        timer?.cancel()
        if let daemon {
            // Dropped without `shutdown()` (a failed test, say): whatever still holds a connection suspended is ended
            // first, since libmicrohttpd aborts the process when it is stopped with one.
            draining.store(true, ordering: .releasing)
            let listener = MHD_quiesce_daemon(daemon)
            releaseSuspended()
            let last = ContinuousClock.now.advanced(by: .seconds(3))
            while ContinuousClock.now < last, holdsSuspended { usleep(2_000) }
            MHD_stop_daemon(daemon)
            if listener >= 0 { close(listener) }
        }
        reactor.stop()
    }

    /// Answers every running handler with a 503 and ends every stream at once, so no connection stays suspended.
    private func releaseSuspended() {
        for context in connections.withLock({ $0.pendingRequests }) {
            context.timeOut(HTTPError.unavailable(retryAfterSeconds: 1, detail: "The server is shutting down.").response)
        }
        for sink in streams.withLock({ Array($0.values) }) { sink.abandon() }
    }

    /// True while a request or stream may still hold its connection suspended in libmicrohttpd.
    private var holdsSuspended: Bool {
        !connections.withLock({ $0.pendingRequests.isEmpty }) || openStreams.load(ordering: .acquiring) > 0
    }

    /// The port actually bound (useful with port 0).
    public var port: UInt16 { listenPort }

    /// Open SSE streams now.
    public var openStreamCount: Int { openStreams.load(ordering: .relaxed) }

    /// Open connections counted against the cap.
    public var openConnectionCount: Int { connections.withLock { $0.liveCount } }

    /// Open connections now in `phase` (for tests that wait for the engine to see their clients).
    func connectionCount(in phase: ConnectionTable<RequestContext>.Phase) -> Int { connections.withLock { $0.count(in: phase) } }

    /// Binds and starts serving on the pool's threads.
    public func start() throws {
        signal(SIGPIPE, SIG_IGN)
        // Before the daemon runs, so that no request meets libmicrohttpd's own HTML error pages.
        if !enroute_mhd_set_error_responder(protocolErrorResponder) {
            FileHandle.standardError.write(Data("HTTPEngine: libmicrohttpd's own error pages are not replaced (MHD_queue_response is not interposed)\n".utf8))
        }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = configuration.port.bigEndian
        inet_pton(AF_INET, configuration.host, &addr.sin_addr)
        let flags = MHD_USE_INTERNAL_POLLING_THREAD.rawValue | MHD_USE_EPOLL.rawValue | MHD_ALLOW_SUSPEND_RESUME.rawValue
            | MHD_USE_TURBO.rawValue | MHD_ALLOW_UPGRADE.rawValue | MHD_USE_ITC.rawValue
        let me = Unmanaged.passUnretained(self).toOpaque()
        daemon = withUnsafePointer(to: &addr) { addrPtr in
            addrPtr.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa in
                let args: [any CVarArg] = [
                    CInt(MHD_OPTION.THREAD_POOL_SIZE.rawValue), CUnsignedInt(configuration.threads),
                    // Headroom above the cap so that excess clients can be told 503 rather than left hanging.
                    CInt(MHD_OPTION.CONNECTION_LIMIT.rawValue), CUnsignedInt(configuration.connectionLimit + 256),
                    CInt(MHD_OPTION.CONNECTION_TIMEOUT.rawValue), CUnsignedInt(configuration.idleTimeoutSeconds),
                    CInt(MHD_OPTION.CONNECTION_MEMORY_LIMIT.rawValue), Int(configuration.connectionMemoryLimit),
                    CInt(MHD_OPTION.LISTEN_BACKLOG_SIZE.rawValue), CUnsignedInt(4096),
                    CInt(MHD_OPTION.SOCK_ADDR.rawValue), sa,
                    CInt(MHD_OPTION.NOTIFY_COMPLETED.rawValue), unsafeBitCast(completedCallback, to: OpaquePointer.self), OpaquePointer(me),
                    CInt(MHD_OPTION.NOTIFY_CONNECTION.rawValue), unsafeBitCast(connectionCallback, to: OpaquePointer.self), OpaquePointer(me),
                    CInt(MHD_OPTION.URI_LOG_CALLBACK.rawValue), unsafeBitCast(uriLogCallback, to: OpaquePointer.self), OpaquePointer(me),
                    CInt(MHD_OPTION.END.rawValue),
                ]
                return withVaList(args) { va in
                    MHD_start_daemon_va(flags, configuration.port, nil, nil, accessCallback, me, va)
                }
            }
        }
        guard let daemon else { throw HTTPServerError.cannotStart(host: configuration.host, port: configuration.port) }
        listenPort = enroute_mhd_bound_port(daemon)
        startTimer()
    }

    private static func elapsedReader<C: Clock>(_ clock: C) -> @Sendable () -> Duration where C.Duration == Duration {
        let start = clock.now
        return { start.duration(to: clock.now) }
    }

    /// Runs `body` at each tick of a fixed schedule that starts now, not when the task first runs, and
    /// sleeps to each tick rather than "a tick from now": a test clock advanced past several ticks (even
    /// before the task starts) wakes the loop for each, and the last wake sees the final time.
    private static func repeating<C: Clock>(on clock: C, every tick: Duration,
                                            _ body: @escaping @Sendable () -> Bool) -> Task<Void, Never> where C.Duration == Duration {
        let first = clock.now.advanced(by: tick)
        return Task {
            var next = first
            while !Task.isCancelled {
                do { try await clock.sleep(until: next, tolerance: nil) } catch { return }
                guard body() else { return }
                next = next.advanced(by: tick)
            }
        }
    }

    // One timer for every stream's heartbeat and every connection's deadline, rather than a task each.
    private func startTimer() {
        let clock: any Clock<Duration> = self.clock
        let body: @Sendable () -> Bool = { [weak self] in
            guard let self else { return false }
            self.tick()
            return true
        }
        timer = Self.repeating(on: clock, every: Self.timerTick, body)
    }

    /// When the next heartbeat is due; touched only by the timer's task.
    private var nextHeartbeat: Duration

    private func tick() {
        let now = elapsed(), interval = configuration.heartbeatInterval
        if now >= nextHeartbeat {
            nextHeartbeat = max(nextHeartbeat + interval, now)
            let comment = Array(": heartbeat\n\n".utf8)
            for sink in streams.withLock({ Array($0.values) }) { _ = sink.write(comment) }
        }
        enforceDeadlines(now: now)
    }

    /// Closes connections past their receive deadlines and answers handlers past theirs.
    func enforceDeadlines(now: Duration) {
        let overdue = connections.withLock { table -> [RequestContext] in
            var cuts: [Int32] = [], overdue: [RequestContext] = []
            for action in table.expired(now: now) {
                switch action {
                case .close(let fd): cuts.append(fd)
                case .timeOut(let context): overdue.append(context)
                }
            }
            // Counted before the sockets go, so whoever sees a connection end also sees it counted; cut
            // under the table's lock, so no fd is reused by a new connection in between.
            if !cuts.isEmpty { countCut(reason: "deadline", cuts.count) }
            for fd in cuts { Self.cut(fd) }
            return overdue
        }
        guard !overdue.isEmpty else { return }
        metrics.increment("enroute_request_deadline_exceeded_total", by: Double(overdue.count),
                          help: "Handlers answered 503 and cancelled at the request deadline.")
        let seconds = configuration.requestDeadline.components.seconds
        for context in overdue {
            context.timeOut(HTTPError.unavailable(retryAfterSeconds: 1,
                                                  detail: "The request took longer than its \(seconds)-second deadline; try again shortly.").response)
        }
    }

    private func countCut(reason: String, _ count: Int = 1) {
        metrics.increment("enroute_connections_cut_total", labels: ["reason": reason], by: Double(count),
                          help: "Connections closed by the server: past a receive deadline, or making way for a newcomer at the cap.")
    }

    /// Ends a connection libmicrohttpd owns: it sees the end on its next read and closes it itself.
    private static func cut(_ fd: Int32) {
        _ = Glibc.shutdown(fd, Int32(SHUT_RDWR))
    }

    /// Stops accepting, lets in-flight requests finish, ends streams cleanly, then stops.
    public func shutdown() async {
        guard let daemon, !draining.exchange(true, ordering: .acquiringAndReleasing) else { return }
        // The listening socket is ours to close, but only after MHD_stop_daemon: its worker threads may still have it in
        // their epoll sets until then, and libmicrohttpd aborts the process when it cannot remove it.
        let listener = MHD_quiesce_daemon(daemon)
        for sink in streams.withLock({ Array($0.values) }) { sink.finish() }
        for socket in reactor.all { socket.close(code: WebSocketCloseCode.goingAway, reason: "server shutting down") }
        let deadline = ContinuousClock.now.advanced(by: configuration.shutdownGrace)
        while ContinuousClock.now < deadline,
              inFlight.load(ordering: .acquiring) > 0 || openStreams.load(ordering: .acquiring) > 0 || reactor.count > 0 {
            try? await Task.sleep(for: .milliseconds(10))
        }
        // Past the grace period whatever still holds a connection suspended is answered or ended now: a handler
        // still running gets the 503 its deadline would give, a stream its end. libmicrohttpd aborts the process
        // if it is stopped with a connection still suspended.
        releaseSuspended()
        // A moment for libmicrohttpd to take those connections back (a resume is processed on its own thread, later) and
        // queue their answers: stopping while one is still marked suspended aborts the process.
        let last = ContinuousClock.now.advanced(by: .seconds(3))
        while ContinuousClock.now < last, holdsSuspended {
            try? await Task.sleep(for: .milliseconds(5))
        }
        MHD_stop_daemon(daemon)
        if listener >= 0 { close(listener) }
        self.daemon = nil
        timer?.cancel()
        reactor.stop()
    }

    // MARK: - Request lifecycle (called on libmicrohttpd's threads)

    fileprivate func access(_ connection: OpaquePointer, url: UnsafePointer<CChar>, method: UnsafePointer<CChar>,
                            version: UnsafePointer<CChar>?, upload: UnsafePointer<CChar>?, uploadSize: UnsafeMutablePointer<Int>,
                            slot: UnsafeMutablePointer<UnsafeMutableRawPointer?>) -> MHD_Result {
        let context: RequestContext
        if let existing = slot.pointee {
            context = Unmanaged<RequestContext>.fromOpaque(existing).takeUnretainedValue()
        } else {
            // The request-line notice made the context; this is only a fallback.
            context = RequestContext(connection: connection, target: String(cString: url))
            slot.pointee = Unmanaged.passRetained(context).toOpaque()
        }
        if !context.begun {
            context.begun = true
            context.request.method = String(cString: method)
            context.chunkedReplies = version.map(Self.repliesChunked) ?? false
            return begin(context)
        }
        if uploadSize.pointee > 0 {
            let size = uploadSize.pointee
            uploadSize.pointee = 0
            switch context.phase {
            case .receiving:
                guard let upload else { return .YES }
                context.request.body.append(contentsOf: UnsafeRawBufferPointer(start: upload, count: size))
                if context.request.body.count > context.bodyLimit {
                    // libmicrohttpd cannot answer mid-upload: discard the rest, answer 413 at the end.
                    context.phase = .rejected(discarded: context.request.body.count)
                    context.request.body = []
                }
                return .YES
            case .rejected(let discarded):
                // The rest is read and thrown away so that the client gets its 413 (the body deadline
                // still applies); past a bounded amount, just drop the connection.
                guard discarded + size <= max(16 * context.bodyLimit, Self.maxDiscardedBody) else { return .NO }
                context.phase = .rejected(discarded: discarded + size)
                return .YES
            case .running, .done:
                return .YES
            }
        }
        switch context.phase {
        case .receiving: return dispatch(context)
        case .rejected: return queue(HTTPError.payloadTooLarge(limit: context.bodyLimit).response, for: context)
        case .running: return context.takeReady().map { queue($0, for: context) } ?? .YES
        case .done: return .YES
        }
    }

    /// The most of an over-limit body read and discarded to answer 413 rather than drop the connection.
    static let maxDiscardedBody = 32 * 1024 * 1024

    private func begin(_ context: RequestContext) -> MHD_Result {
        let id = UInt(bitPattern: context.connection), now = elapsed()
        let live = connections.withLock { table in
            table.headersReceived(id, now: now)
            return table.liveCount
        }
        if live > configuration.connectionLimit {
            context.phase = .done
            var response = HTTPError.unavailable(retryAfterSeconds: 1, detail: "Too many connections; try again shortly.").response
            response.headers.add("Connection", "close")
            return queue(response, for: context)
        }
        context.request.headers = Self.values(context.connection, kind: .HEADER_KIND)
        // RFC 9112 §3.2: an HTTP/1.1 request carries exactly one Host.
        let hosts = context.request.headers.count { HTTPHeaders.sameName($0.name, "Host") }
        if hosts > 1 || (hosts == 0 && context.chunkedReplies) {
            return queue(HTTPError.badRequest(hosts > 1 ? "The request has more than one Host header."
                                                        : "An HTTP/1.1 request needs a Host header.").response, for: context)
        }
        context.request.query = Dictionary(Self.values(context.connection, kind: .GET_ARGUMENT_KIND).map { ($0.name, $0.value) },
                                           uniquingKeysWith: { first, _ in first })
        // The raw target, decoded here: libmicrohttpd's decoded path ends at a %00.
        guard let path = Self.decodedPath(context.target) else {
            return queue(HTTPError.notFound().response, for: context)
        }
        context.request.path = path
        context.resolution = router.resolve(method: context.request.method, path: path)
        if case .route(let route, let parameters) = context.resolution {
            context.bodyLimit = route.bodyLimit
            context.request.pathParameters = parameters
            context.request.routePattern = route.pattern
        } else {
            context.bodyLimit = Router.defaultBodyLimit
        }
        if let length = context.request.headers["Content-Length"].flatMap(Int.init), length > context.bodyLimit {
            context.phase = .done
            return queue(HTTPError.payloadTooLarge(limit: context.bodyLimit).response, for: context)
        }
        return .YES
    }

    private func dispatch(_ context: RequestContext) -> MHD_Result {
        let request = context.request
        switch context.resolution {
        case .notFound, .none:
            context.phase = .done
            return queue(HTTPError.notFound().response, for: context)
        case .methodNotAllowed(let allow):
            context.phase = .done
            return queue(Router.methodNotAllowed(allow).response, for: context)
        case .route(let route, _):
            if draining.load(ordering: .relaxed) {
                context.phase = .done
                var response = HTTPError.unavailable(retryAfterSeconds: 1, detail: "The server is restarting.").response
                response.headers.add("Connection", "close")
                return queue(response, for: context)
            }
            switch route.handler {
            case .sync(let handle):
                context.phase = .done
                return queue(Router.run { try handle(request) }, for: context)
            case .async(let handle):
                if inFlight.wrappingAdd(1, ordering: .relaxed).newValue > configuration.maxInFlight {
                    inFlight.wrappingSubtract(1, ordering: .relaxed)
                    context.phase = .done
                    return queue(HTTPError.unavailable(retryAfterSeconds: 1, detail: "The server is busy; try again shortly.").response, for: context)
                }
                context.phase = .running
                let id = UInt(bitPattern: context.connection), now = elapsed()
                connections.withLock { $0.dispatched(id, request: context, now: now) }
                let run: @Sendable () async -> Void = {
                    let response: HTTPResponse
                    do { response = try await handle(request) } catch { response = Router.answer(for: error) }
                    self.inFlight.wrappingSubtract(1, ordering: .relaxed)
                    context.complete(response)
                }
                // The handler starts here, on this connection's thread, and moves to Swift's executor only when it first
                // suspends: one that answers without waiting (a read from memory, a refusal) is queued at once, with no
                // suspend and resume of the connection and no wake-up of this thread.
                if #available(macOS 26.0, iOS 26.0, *) {
                    context.start(Task.immediate(operation: run))
                } else {
                    context.start(Task(operation: run))
                }
                if let ready = context.suspendUnlessReady() { return queue(ready, for: context) }
                return .YES
            }
        }
    }

    private func queue(_ response: HTTPResponse, for context: RequestContext) -> MHD_Result {
        context.phase = .done
        let connection = context.connection
        let id = UInt(bitPattern: connection)
        connections.withLock { table in
            switch response.body {
            case .bytes: table.answered(id)
            case .eventStream: table.exempted(id, permanently: false)
            case .webSocket: table.exempted(id, permanently: true)
            }
        }
        var status = response.status
        let mhdResponse: OpaquePointer?
        switch response.body {
        case .bytes(let bytes):
            mhdResponse = bytes.withUnsafeBytes { raw in
                MHD_create_response_from_buffer(raw.count, UnsafeMutableRawPointer(mutating: raw.baseAddress), .RESPMEM_MUST_COPY)
            }
        case .eventStream(let stream):
            let sink = MHDEventSink(connection: connection, chunked: context.chunkedReplies, maxBuffered: configuration.maxStreamBuffer,
                                    reactor: reactor, server: self)
            // The block is libmicrohttpd's buffer for an unchunked reply, held for the stream's life; events are
            // written to the socket directly once the head is out, so it only carries the preamble and first events.
            mhdResponse = MHD_create_response_from_callback(UInt64.max, 256, sseReader, Unmanaged.passRetained(sink).toOpaque(), sseFree)
            _ = enroute_mhd_set_timeout(connection, 0)
            openStreams.wrappingAdd(1, ordering: .relaxed)
            streams.withLock { $0[ObjectIdentifier(sink)] = sink }
            sink.start(producer: stream.start(sink: sink, retryMilliseconds: configuration.sseRetryMilliseconds))
            if draining.load(ordering: .relaxed) { sink.finish() }
        case .webSocket(let session):
            let headers = context.request.headers
            guard headers["Sec-WebSocket-Version"] == "13" else {
                var error = HTTPError(status: 426, title: "Upgrade Required", detail: "Only WebSocket version 13 is supported.")
                error.headers.add("Sec-WebSocket-Version", "13")
                return queue(error.response, for: context)
            }
            guard let key = headers["Sec-WebSocket-Key"], Data(base64Encoded: key.trimmingCharacters(in: .whitespaces))?.count == 16,
                  headers["Connection"]?.lowercased().contains("upgrade") == true else {
                return queue(HTTPError.badRequest("A WebSocket upgrade needs Connection: Upgrade and a 16-byte Sec-WebSocket-Key.").response, for: context)
            }
            let upgrade = UpgradeContext(server: self, session: session)
            mhdResponse = MHD_create_response_for_upgrade(upgradeCallback, Unmanaged.passRetained(upgrade).toOpaque())
            MHD_add_response_header(mhdResponse, "Upgrade", "websocket")
            MHD_add_response_header(mhdResponse, "Sec-WebSocket-Accept", WebSocketCodec.acceptValue(forKey: key))
            status = 101
        }
        guard let mhdResponse else { return .NO }
        for field in response.headers { MHD_add_response_header(mhdResponse, field.name, field.value) }
        let result = MHD_queue_response(connection, UInt32(status), mhdResponse)
        MHD_destroy_response(mhdResponse)
        metrics.recordRequest(route: context.request.routePattern.isEmpty ? "unmatched" : context.request.routePattern,
                              method: context.request.method, status: status, seconds: context.elapsedSeconds)
        // A stream keeps its context for hours: what the request carried is no longer needed.
        if case .eventStream = response.body { context.releaseRequest() }
        return result
    }

    // MARK: - Connection notices (libmicrohttpd's threads)

    /// libmicrohttpd has parsed a request line (before its headers): make the request's context.
    fileprivate func requestLine(_ connection: OpaquePointer, target: UnsafePointer<CChar>) -> UnsafeMutableRawPointer {
        let id = UInt(bitPattern: connection), now = elapsed()
        connections.withLock { $0.requestLineReceived(id, now: now) }
        return Unmanaged.passRetained(RequestContext(connection: connection, target: String(cString: target))).toOpaque()
    }

    fileprivate func requestCompleted(_ connection: OpaquePointer) {
        let id = UInt(bitPattern: connection), now = elapsed()
        connections.withLock { $0.completed(id, now: now) }
    }

    fileprivate func connectionOpened(_ connection: OpaquePointer) {
        let id = UInt(bitPattern: connection), now = elapsed(), fd = enroute_mhd_client_fd(connection)
        let limit = configuration.connectionLimit
        connections.withLock { table in
            guard case .close(let victim)? = table.opened(id, fd: fd, now: now, limit: limit) else { return }
            countCut(reason: "evicted")   // before the cut, as for deadlines
            Self.cut(victim)
        }
    }

    fileprivate func connectionClosed(_ connection: OpaquePointer) {
        let id = UInt(bitPattern: connection)
        connections.withLock { $0.closed(id) }
    }

    fileprivate func streamEnded(_ sink: MHDEventSink) {
        streams.withLock { $0[ObjectIdentifier(sink)] = nil }
        openStreams.wrappingSubtract(1, ordering: .relaxed)
    }

    fileprivate func upgraded(_ context: UpgradeContext, fd: Int32, handle: OpaquePointer, extra: [UInt8]) {
        var continuation: AsyncStream<WebSocketMessage>.Continuation!
        let messages = AsyncStream<WebSocketMessage>(bufferingPolicy: .bufferingNewest(1024)) { continuation = $0 }
        let sessionTask = Mutex<Task<Void, Never>?>(nil)
        let socket = UpgradedSocket(fd: fd, handle: handle, reactor: reactor, maxMessageSize: configuration.maxWebSocketMessage,
                                    maxOutbound: configuration.maxWebSocketOutbound, continuation: continuation,
                                    clock: clock, closeTimeout: configuration.webSocketCloseTimeout,
                                    onFinish: { sessionTask.withLock { $0?.cancel() } })
        reactor.add(socket)
        switch context.session.kind {
        case .run(let session):
            let webSocket = WebSocket(messages: messages, transport: socket)
            sessionTask.withLock { $0 = Task { await session(webSocket); if webSocket.isOpen { webSocket.close() } } }
        case .channel(let join):
            // A channel member only listens: what the client sends (other than control frames) is dropped.
            continuation.finish()
            join(socket)
        }
        if !extra.isEmpty { socket.feed(extra) }
        if draining.load(ordering: .relaxed) { socket.close(code: WebSocketCloseCode.goingAway, reason: "server shutting down") }
    }

    /// Whether libmicrohttpd frames a body of unknown length in chunks for this HTTP version (1.1 and
    /// later 1.x), rather than ending it by closing the connection (1.0).
    /// Read in place: this runs for every request.
    static func repliesChunked(version: UnsafePointer<CChar>) -> Bool {
        let prefix = "HTTP/1.".utf8
        var i = 0
        for byte in prefix {
            guard UInt8(bitPattern: version[i]) == byte else { return false }
            i += 1
        }
        // "HTTP/1.1" or a later minor version.
        let minor = UInt8(bitPattern: version[i])
        return minor >= UInt8(ascii: "1") && minor <= UInt8(ascii: "9")
    }

    /// The percent-decoded path of a request target (the part before `?`), or nil when an escape is
    /// malformed or the path holds a NUL or another control character: such a path names nothing.
    static func decodedPath(_ target: String) -> String? {
        // The usual target has nothing to decode or cut: use it as it is.
        if !target.utf8.contains(where: { $0 == UInt8(ascii: "%") || $0 == UInt8(ascii: "?") || $0 < 0x20 || $0 == 0x7F }) {
            return target
        }
        var raw = Array(target.utf8)
        if let query = raw.firstIndex(of: UInt8(ascii: "?")) { raw.removeSubrange(query...) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(raw.count)
        var i = 0
        while i < raw.count {
            var byte = raw[i]
            if byte == UInt8(ascii: "%") {
                guard i + 2 < raw.count, let high = hexValue(raw[i + 1]), let low = hexValue(raw[i + 2]) else { return nil }
                byte = high << 4 | low
                i += 2
            }
            if byte < 0x20 || byte == 0x7F { return nil }
            bytes.append(byte)
            i += 1
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    private static func values(_ connection: OpaquePointer, kind: MHD_ValueKind) -> HTTPHeaders {
        final class Box { var headers = HTTPHeaders() }
        let box = Box()
        let iterator: MHD_KeyValueIterator = { cls, _, key, value in
            let box = Unmanaged<Box>.fromOpaque(cls!).takeUnretainedValue()
            if let key { box.headers.add(String(cString: key), value.map { String(cString: $0) } ?? "") }
            return .YES
        }
        withExtendedLifetime(box) {
            _ = MHD_get_connection_values(connection, kind, iterator, Unmanaged.passUnretained(box).toOpaque())
        }
        return box.headers
    }
}

// MARK: - Per-request state

/// One request's state across libmicrohttpd's repeated calls and the handler's task.
final class RequestContext: @unchecked Sendable {
    enum Phase: Equatable { case receiving, rejected(discarded: Int), running, done }

    let connection: OpaquePointer
    let started = ContinuousClock.now
    /// The request target as sent, before any decoding.
    let target: String
    var request: HTTPRequest
    var resolution: Router.Resolution?
    var bodyLimit = Router.defaultBodyLimit
    // Touched only on the connection's thread.
    var phase = Phase.receiving
    var begun = false
    /// True when a streamed answer goes out in HTTP/1.1 chunks (the client speaks HTTP/1.1 or later).
    var chunkedReplies = false

    private struct Shared {
        var ready: HTTPResponse?
        /// The first answer wins: the handler's, or the deadline's 503.
        var answered = false
        var suspended = false
        var closed = false
        var task: Task<Void, Never>?
    }
    private let shared = Mutex(Shared())

    init(connection: OpaquePointer, target: String) {
        self.connection = connection
        self.target = target
        self.request = HTTPRequest(method: "", path: "")
    }

    /// Holds the handler's task, to cancel it when the connection goes or the deadline passes (an answered request
    /// needs no cancelling: its finished task is let go, with the memory it holds, rather than kept for a stream's life).
    func start(_ task: Task<Void, Never>) {
        let cancel = shared.withLock { s in
            if !s.answered { s.task = task }
            return s.closed
        }
        if cancel { task.cancel() }
    }

    var elapsedSeconds: Double {
        let d = ContinuousClock.now - started
        return Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
    }

    /// Drops the request's headers, body and route once its answer is a long-lived stream.
    func releaseRequest() {
        request = HTTPRequest(method: "", path: "")
        resolution = nil
    }

    /// Called by the handler's task (or the deadline); resumes the connection if it is waiting.
    func complete(_ response: HTTPResponse) {
        shared.withLock { s in
            guard !s.closed, !s.answered else { return }
            s.answered = true
            s.ready = response
            s.task = nil
            if s.suspended {
                s.suspended = false
                MHD_resume_connection(connection)
            }
        }
    }

    /// Suspends the connection unless the answer is already there, in which case returns it.
    func suspendUnlessReady() -> HTTPResponse? {
        shared.withLock { s in
            if let ready = s.ready { s.ready = nil; return ready }
            s.suspended = true
            MHD_suspend_connection(connection)
            return nil
        }
    }

    func takeReady() -> HTTPResponse? {
        shared.withLock { s in
            defer { s.ready = nil }
            return s.ready
        }
    }

    /// The handler overran its deadline: answer `response` now, and cancel the handler.
    func timeOut(_ response: HTTPResponse) {
        let task = shared.withLock { $0.task }
        complete(response)
        task?.cancel()
    }

    /// The connection is gone: never resume it again, and stop the handler.
    func close() {
        let task = shared.withLock { s in
            s.closed = true
            return s.task
        }
        task?.cancel()
    }
}

/// The upgrade handler's context, holding the session closure until the socket is handed over.
final class UpgradeContext: @unchecked Sendable {
    let server: HTTPServer
    let session: WebSocketSession
    init(server: HTTPServer, session: WebSocketSession) { self.server = server; self.session = session }
}

/// An SSE stream on a libmicrohttpd connection.
///
/// libmicrohttpd sends the headers and whatever is queued; once the queue is empty the connection is
/// suspended there and, from then on, events are written to the socket directly (framed as HTTP/1.1
/// chunks when the reply is chunked) by whoever publishes them, with the reactor watching for room
/// and hang-up. Waking libmicrohttpd for every event would cost an eventfd write per stream and a
/// walk of every suspended connection per wake-up. To end the stream the connection is resumed and
/// libmicrohttpd writes the last chunk (or closes, after an error).
final class MHDEventSink: EventSink, LiveMember, ReactorSocket, @unchecked Sendable {
    private enum Mode { case engine, direct }

    private struct State {
        /// Engine mode: bytes for the content reader. Direct mode: framed bytes the socket has not taken yet.
        var buffer: [UInt8] = []
        var mode = Mode.engine
        var suspended = false
        var finished = false
        var failed = false
        var released = false
        var wantsWrite = false
        var producer: Task<Void, Never>?
    }

    private let connection: OpaquePointer
    private let chunked: Bool
    private let leave = LeaveNotice()
    private let maxBuffered: Int
    private let reactor: SocketReactor
    private weak var server: HTTPServer?
    private let state = Mutex(State())
    /// The client socket, once libmicrohttpd has handed the stream over; -1 before.
    private(set) var fd: Int32 = -1

    init(connection: OpaquePointer, chunked: Bool, maxBuffered: Int, reactor: SocketReactor, server: HTTPServer) {
        self.connection = connection
        self.chunked = chunked
        self.maxBuffered = maxBuffered
        self.reactor = reactor
        self.server = server
    }

    func start(producer: Task<Void, Never>?) {
        guard let producer else { return }
        let cancel = state.withLock { s -> Bool in
            s.producer = producer
            return s.released
        }
        if cancel { producer.cancel() }
    }

    // MARK: Writing (any thread)

    func write(_ bytes: [UInt8]) -> Bool {
        state.withLock { s in
            switch s.mode {
            case .engine: return queueLocked(&s, bytes)
            case .direct: return sendLocked(&s, chunked ? LiveFrames.chunk(bytes) : bytes)
            }
        }
    }

    func deliver(_ frames: LiveFrames) -> Bool {
        state.withLock { s in
            switch s.mode {
            case .engine: return queueLocked(&s, frames.sse)
            case .direct: return sendLocked(&s, chunked ? frames.sseChunk : frames.sse)
            }
        }
    }

    func finish() {
        state.withLock { s in
            guard !s.finished else { return }
            s.finished = true
            switch s.mode {
            case .engine:
                resumeLocked(&s)
            case .direct:
                if s.buffer.isEmpty { handBackLocked(&s, failed: false) }
            }
        }
    }

    func end() { finish() }

    /// Ends the stream now, dropping what the client has not read: the shutdown's last word, since libmicrohttpd
    /// cannot stop while a connection stays suspended.
    func abandon() {
        state.withLock { s in
            s.finished = true
            switch s.mode {
            case .engine:
                s.buffer.removeAll()
                resumeLocked(&s)
            case .direct:
                handBackLocked(&s, failed: true)
            }
        }
    }

    func onLeave(_ handler: @escaping @Sendable () -> Void) { leave.set(handler) }

    private func queueLocked(_ s: inout State, _ bytes: [UInt8]) -> Bool {
        guard !s.finished, !s.released else { return false }
        if s.buffer.count + bytes.count > maxBuffered {
            // Too far behind: drop this client rather than buffer without limit.
            s.failed = true
            s.finished = true
            s.buffer.removeAll()
            if s.suspended {
                resumeLocked(&s)
            } else {
                // libmicrohttpd is waiting for room on a socket the client does not read, and would not ask
                // for more (and see the end) until a timeout: shut the socket, so its next poll fails.
                let socket = fd >= 0 ? fd : enroute_mhd_client_fd(connection)
                if socket >= 0 { shutdown(socket, Int32(SHUT_RDWR)) }
            }
            return false
        }
        s.buffer.append(contentsOf: bytes)
        resumeLocked(&s)
        return true
    }

    private func sendLocked(_ s: inout State, _ bytes: [UInt8]) -> Bool {
        guard !s.finished, !s.released else { return false }
        if !s.buffer.isEmpty {
            guard s.buffer.count + bytes.count <= maxBuffered else {
                handBackLocked(&s, failed: true)
                return false
            }
            s.buffer.append(contentsOf: bytes)
            return true
        }
        let sent = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
        if sent == bytes.count { return true }
        if sent < 0, errno != EAGAIN, errno != EWOULDBLOCK, errno != EINTR {
            handBackLocked(&s, failed: true)
            return false
        }
        s.buffer = Array(bytes[max(0, sent)...])
        setWantsWriteLocked(&s, true)
        return true
    }

    private func resumeLocked(_ s: inout State) {
        guard s.suspended, !s.released else { return }
        s.suspended = false
        MHD_resume_connection(connection)
    }

    private func setWantsWriteLocked(_ s: inout State, _ wants: Bool) {
        guard s.wantsWrite != wants else { return }
        s.wantsWrite = wants
        reactor.setWantsWrite(self, wants, input: false)
    }

    /// Leaves direct mode: libmicrohttpd takes the connection back to end the reply (or to close it).
    private func handBackLocked(_ s: inout State, failed: Bool) {
        guard s.mode == .direct else { return }
        reactor.remove(self)
        s.mode = .engine
        s.wantsWrite = false
        s.finished = true
        if failed { s.failed = true }
        s.buffer.removeAll()
        resumeLocked(&s)
    }

    // MARK: The reactor (its thread)

    func writable() {
        state.withLock { s in
            guard s.mode == .direct, !s.released else { return }
            while !s.buffer.isEmpty {
                let sent = s.buffer.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
                if sent > 0 { s.buffer.removeFirst(sent); continue }
                if sent < 0, errno == EINTR { continue }
                if sent < 0, errno == EAGAIN || errno == EWOULDBLOCK { return }
                handBackLocked(&s, failed: true)
                return
            }
            setWantsWriteLocked(&s, false)
            if s.finished { handBackLocked(&s, failed: false) }
        }
    }

    /// The client hung up (or the socket failed): end at once rather than at the next write.
    func readable(buffer: inout [UInt8]) {
        state.withLock { s in
            guard s.mode == .direct, !s.released else { return }
            handBackLocked(&s, failed: true)
        }
    }

    // MARK: libmicrohttpd (its thread)

    /// libmicrohttpd asks for the next bytes; 0 means "suspended": the stream is then written directly.
    func read(into destination: UnsafeMutablePointer<CChar>, max: Int) -> Int {
        state.withLock { s in
            if !s.buffer.isEmpty {
                let n = min(max, s.buffer.count)
                s.buffer.withUnsafeBytes { raw in
                    UnsafeMutableRawPointer(destination).copyMemory(from: raw.baseAddress!, byteCount: n)
                }
                s.buffer.removeFirst(n)
                return n
            }
            if s.finished { return s.failed ? Int(MHD_CONTENT_READER_END_WITH_ERROR) : Int(MHD_CONTENT_READER_END_OF_STREAM) }
            // Everything libmicrohttpd had is on the socket now; it stays idle until resumed.
            s.suspended = true
            MHD_suspend_connection(connection)
            if fd < 0 { fd = enroute_mhd_client_fd(connection) }
            if fd >= 0 {
                // Small events must leave at once, whatever corking the engine left on the socket.
                var on: Int32 = 1, off: Int32 = 0
                setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
                setsockopt(fd, Int32(IPPROTO_TCP), TCP_CORK, &off, socklen_t(MemoryLayout<Int32>.size))
                s.mode = .direct
                reactor.add(self, input: false)
            }
            return 0
        }
    }

    /// The response is gone (client left or stream ended): stop the producer and tell the channel.
    func released() {
        let producer = state.withLock { s -> Task<Void, Never>? in
            if s.mode == .direct { reactor.remove(self); s.mode = .engine }
            s.released = true
            s.finished = true
            s.suspended = false
            s.buffer.removeAll()
            return s.producer
        }
        producer?.cancel()
        leave.fire()
        server?.streamEnded(self)
    }
}

// MARK: - C callbacks

private let accessCallback: MHD_AccessHandlerCallback = { cls, connection, url, method, version, upload, uploadSize, slot in
    let server = Unmanaged<HTTPServer>.fromOpaque(cls!).takeUnretainedValue()
    return server.access(connection!, url: url!, method: method!, version: version, upload: upload, uploadSize: uploadSize!, slot: slot!)
}

private let completedCallback: MHD_RequestCompletedCallback = { cls, connection, slot, _ in
    if let connection { Unmanaged<HTTPServer>.fromOpaque(cls!).takeUnretainedValue().requestCompleted(connection) }
    guard let slot, let raw = slot.pointee else { return }
    let context = Unmanaged<RequestContext>.fromOpaque(raw).takeRetainedValue()
    context.close()
    slot.pointee = nil
}

private let connectionCallback: MHD_NotifyConnectionCallback = { cls, connection, _, code in
    guard let connection else { return }
    let server = Unmanaged<HTTPServer>.fromOpaque(cls!).takeUnretainedValue()
    if code == .CONNECTION_NOTIFY_STARTED {
        server.connectionOpened(connection)
    } else {
        server.connectionClosed(connection)
    }
}

private let uriLogCallback: @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>?, OpaquePointer?) -> UnsafeMutableRawPointer? = {
    cls, uri, connection in
    guard let uri, let connection else { return nil }
    return Unmanaged<HTTPServer>.fromOpaque(cls!).takeUnretainedValue().requestLine(connection, target: uri)
}

/// The problem+json answer for an error libmicrohttpd detects before any handler runs.
private let protocolErrorResponder: enroute_mhd_error_responder = { status in
    let response = HTTPError.protocolError(status: Int(status)).response
    let bytes = response.bodyBytes
    let mhd = bytes.withUnsafeBytes { raw in
        MHD_create_response_from_buffer(raw.count, UnsafeMutableRawPointer(mutating: raw.baseAddress), .RESPMEM_MUST_COPY)
    }
    guard let mhd else { return nil }
    for field in response.headers { MHD_add_response_header(mhd, field.name, field.value) }
    return mhd
}

private let sseReader: MHD_ContentReaderCallback = { cls, _, buffer, max in
    let sink = Unmanaged<MHDEventSink>.fromOpaque(cls!).takeUnretainedValue()
    return sink.read(into: buffer!, max: max)
}

private let sseFree: MHD_ContentReaderFreeCallback = { cls in
    let sink = Unmanaged<MHDEventSink>.fromOpaque(cls!).takeRetainedValue()
    sink.released()
}

private let upgradeCallback: MHD_UpgradeHandler = { cls, _, _, extra, extraSize, fd, urh in
    let context = Unmanaged<UpgradeContext>.fromOpaque(cls!).takeRetainedValue()
    let bytes = extra.map { Array(UnsafeRawBufferPointer(start: $0, count: extraSize)) } ?? []
    context.server.upgraded(context, fd: fd, handle: urh!, extra: bytes)
}
