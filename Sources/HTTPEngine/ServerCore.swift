import Foundation
import Synchronization
import CEpoll

/// The server's state, shared by its loops and connections; it never refers to the `HTTPServer` that owns it,
/// so a server dropped without `shutdown()` can stop its loops before anything it holds is gone.
///
/// `loops`, `listener`, `listenPort` and `timer` are set by `start()` before any loop runs and changed again only by
/// the shutdown; everything else is immutable, atomic or under a lock of its own.
final class ServerCore: @unchecked Sendable {
    let configuration: HTTPServerConfiguration
    let metrics: MetricsRegistry
    let router: Router
    let clock: any Clock<Duration>
    /// What every connection's rules are measured against.
    let connectionLimits: ConnectionLimits
    let budget: DescriptorBudget
    let accept: @Sendable (Int32) -> Int32
    /// Time on `clock` since the server was made.
    let elapsed: @Sendable () -> Duration
    let wallClock: @Sendable () -> Date
    var loops: [EventLoop] = []
    var listener: Int32 = -1
    var listenPort: UInt16 = 0
    let nextLoop = Atomic<Int>(0)
    let serials = Atomic<UInt64>(0)
    let inFlight = Atomic<Int>(0)
    let openStreams = Atomic<Int>(0)
    let webSockets = Atomic<Int>(0)
    let draining = Atomic<Bool>(false)
    let stopped = Atomic<Bool>(false)
    let loopsEnded = Mutex<(count: Int, waiters: [CheckedContinuation<Void, Never>])>((0, []))
    let registry = Mutex(ConnectionRegistry())
    let streams = Mutex<[ObjectIdentifier: StreamSink]>([:])
    let sockets = Mutex<[ObjectIdentifier: UpgradedSocket]>([:])
    var timer: Task<Void, Never>?

    init(
        router: Router, configuration: HTTPServerConfiguration, metrics: MetricsRegistry, clock: any Clock<Duration>,
        wallClock: @escaping @Sendable () -> Date, budget: DescriptorBudget,
        accept: @escaping @Sendable (Int32) -> Int32
    ) {
        self.budget = budget
        self.accept = accept
        self.router = router
        self.configuration = configuration
        self.metrics = metrics
        self.clock = clock
        self.wallClock = wallClock
        self.elapsed = Self.elapsedReader(clock)
        connectionLimits = ConnectionLimits(
            maxHeadBytes: configuration.maxHeadBytes, maxAnswerBacklog: configuration.maxAnswerBacklog,
            deadlines: .init(
                header: configuration.headerTimeout, body: configuration.bodyTimeout,
                idle: .seconds(Int(configuration.idleTimeoutSeconds)), request: configuration.requestDeadline),
            linger: Connection.lingerTime)
        metrics.gauge("enroute_open_connections", help: "Client connections open now.") { [weak self] in
            Double(self?.openConnectionCount ?? 0)
        }
        metrics.gauge("enroute_open_sse_streams", help: "Server-Sent Event streams open now.") { [weak self] in
            Double(self?.openStreams.load(ordering: .relaxed) ?? 0)
        }
        metrics.gauge("enroute_open_websockets", help: "WebSocket sessions open now.") { [weak self] in
            Double(self?.webSockets.load(ordering: .relaxed) ?? 0)
        }
        metrics.gauge("enroute_requests_in_flight", help: "Async handlers running now.") { [weak self] in
            Double(self?.inFlight.load(ordering: .relaxed) ?? 0)
        }
    }

    var port: UInt16 { listenPort }

    var openStreamCount: Int { openStreams.load(ordering: .relaxed) }

    var isDraining: Bool { draining.load(ordering: .relaxed) }

    var isAcceptPaused: Bool { loops.contains { $0.isListenerPaused } }

    // MARK: - Starting

    func start() throws {
        signal(SIGPIPE, SIG_IGN)
        listener = try Self.listen(host: configuration.host, port: configuration.port)
        listenPort = Self.boundPort(listener)
        let dates = DateCache(wallClock: wallClock)
        let metrics = self.metrics
        let paused: @Sendable () -> Void = {
            metrics.increment(
                "enroute_accept_paused_total",
                help: "Times a loop stopped accepting because descriptors ran out (until one is freed).")
        }
        for index in 0..<max(1, configuration.threads) {
            let loop = EventLoop(
                index: index, elapsed: elapsed, dates: dates, accept: accept,
                onPause: paused
            ) { [self] fd, loop in accepted(fd, on: loop) }
            loops.append(loop)
        }
        for loop in loops {
            loop.start(name: "enroute-http-\(loop.index)") { [self] in loopEnded() }
            loop.listen(on: listener)
        }
        startTimer()
    }

    private static func listen(host: String, port: UInt16) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue | SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw HTTPServerError.cannotStart(host: host, port: port) }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = port.bigEndian
        guard inet_pton(AF_INET, host, &addr.sin_addr) == 1 else {
            close(fd)
            throw HTTPServerError.cannotStart(host: host, port: port)
        }
        let bound = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, Glibc.listen(fd, 4096) == 0 else {
            close(fd)
            throw HTTPServerError.cannotStart(host: host, port: port)
        }
        return fd
    }

    private static func boundPort(_ fd: Int32) -> UInt16 {
        var addr = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return UInt16(bigEndian: addr.sin_port)
    }

    private static func elapsedReader<C: Clock>(_ clock: C) -> @Sendable () -> Duration where C.Duration == Duration {
        let start = clock.now
        return { start.duration(to: clock.now) }
    }

    // MARK: - Handlers, streams and WebSockets

    /// Takes a slot for an async handler; false past `maxInFlight`.
    func admit() -> Bool {
        if inFlight.wrappingAdd(1, ordering: .relaxed).newValue > configuration.maxInFlight {
            inFlight.wrappingSubtract(1, ordering: .relaxed)
            return false
        }
        return true
    }

    /// An async handler has returned.
    func dismiss() { inFlight.wrappingSubtract(1, ordering: .relaxed) }

    func streamOpened(_ sink: StreamSink) {
        openStreams.wrappingAdd(1, ordering: .relaxed)
        streams.withLock { $0[ObjectIdentifier(sink)] = sink }
    }

    func streamEnded(_ sink: StreamSink) {
        let removed = streams.withLock { $0.removeValue(forKey: ObjectIdentifier(sink)) != nil }
        if removed { openStreams.wrappingSubtract(1, ordering: .relaxed) }
    }

    /// Runs a WebSocket's session (or joins its channel) once its 101 is out.
    func webSocketOpened(_ socket: UpgradedSocket, session: WebSocketSession, messages: AsyncStream<WebSocketMessage>) {
        webSockets.wrappingAdd(1, ordering: .relaxed)
        sockets.withLock { $0[ObjectIdentifier(socket)] = socket }
        let sessionTask = Mutex<Task<Void, Never>?>(nil)
        socket.whenFinished { [weak self] in
            sessionTask.withLock { $0?.cancel() }
            guard let self else { return }
            let removed = sockets.withLock { $0.removeValue(forKey: ObjectIdentifier(socket)) != nil }
            if removed { webSockets.wrappingSubtract(1, ordering: .relaxed) }
        }
        switch session.kind {
        case .run(let session):
            let webSocket = WebSocket(messages: messages, transport: socket)
            sessionTask.withLock {
                $0 = Task {
                    await session(webSocket); if webSocket.isOpen { webSocket.close() }
                }
            }
        case .channel(let join):
            // A channel member only listens: what the client sends (other than control frames) is dropped.
            join(socket)
        }
        if isDraining { socket.close(code: WebSocketCloseCode.goingAway, reason: "server shutting down") }
    }
}
