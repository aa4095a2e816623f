public import Foundation
import Synchronization
import CEpoll

/// Settings for `HTTPServer`; the defaults suit production.
public struct HTTPServerConfiguration: Sendable {
    /// IPv4 address to listen on.
    public var host = "127.0.0.1"
    /// TCP port; 0 picks a free one (read it back from `HTTPServer.port`).
    public var port: UInt16 = 8080
    /// Event loops, one thread each; by default one per core but one (`defaultThreads(cores:)`).
    public var threads = HTTPServerConfiguration.defaultThreads(cores: ProcessInfo.processInfo.activeProcessorCount)
    /// Open connections beyond this get 503 with `Retry-After` and are closed; before that, a newcomer
    /// over the cap makes the connection that has waited longest for its request head give way. The server lowers it
    /// below the process's descriptor limit (`DescriptorBudget`), so that the cap, not `accept`, runs out first.
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
    /// The largest request line and header block accepted, in bytes: a longer request line is 414, a longer head 431.
    public var maxHeadBytes = 8 * 1024
    /// How often an idle SSE stream gets a heartbeat comment.
    public var heartbeatInterval: Duration = .seconds(15)
    /// The `retry:` sent at the start of every SSE stream.
    public var sseRetryMilliseconds = 3_000
    /// An SSE client further behind than this many bytes is disconnected.
    public var maxStreamBuffer = 256 * 1024
    /// A client that pipelines requests and leaves more than this many bytes of answers unread gets no more answered
    /// (nor its requests read) until it has read half of them; one that never reads meets the idle timeout.
    public var maxAnswerBacklog = 1024 * 1024
    /// Largest WebSocket message accepted; larger ones close with 1009.
    public var maxWebSocketMessage = 64 * 1024
    /// A WebSocket client further behind than this many bytes is disconnected.
    public var maxWebSocketOutbound = 1024 * 1024
    /// How long a WebSocket close waits for the client's own close frame before cutting the connection.
    public var webSocketCloseTimeout: Duration = .seconds(2)
    /// How long shutdown waits for in-flight requests and streams.
    public var shutdownGrace: Duration = .seconds(10)

    public init() {}

    /// Event loops for a machine of `cores`: one per core but one, at least one. The process has more to run than its
    /// loops (async handlers on Swift's pool, the database writer, fan-out, and often a proxy or client beside it), and
    /// a
    /// loop that shares its core is preempted mid-batch: on 2 cores, one loop served about 30% more requests than two
    /// with a
    /// fifth of the p99 (`bench/http-engine.sh`), because a busy loop takes its events in batches and seldom sleeps.
    public static func defaultThreads(cores: Int) -> Int { max(1, cores - 1) }
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

/// An HTTP/1.1 server on epoll event loops of its own: sync and async handlers, SSE, WebSocket, deadlines, metrics.
public final class HTTPServer: Sendable {
    private let core: ServerCore

    /// A server for `router`; `clock` paces SSE heartbeats, the receive and request deadlines, and times
    /// WebSocket close handshakes; `wallClock` dates the answers.
    public convenience init(
        router: Router, configuration: HTTPServerConfiguration = HTTPServerConfiguration(),
        metrics: MetricsRegistry = MetricsRegistry(),
        clock: any Clock<Duration> = ContinuousClock(),
        wallClock: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.init(
            router: router, configuration: configuration, metrics: metrics, clock: clock, wallClock: wallClock,
            descriptorLimit: DescriptorLimit.current, accept: EventLoop.systemAccept)
    }

    /// A server whose descriptor limit and `accept` are given (a test's stand-ins).
    init(
        router: Router, configuration: HTTPServerConfiguration, metrics: MetricsRegistry, clock: any Clock<Duration>,
        wallClock: @escaping @Sendable () -> Date, descriptorLimit: Int,
        accept: @escaping @Sendable (Int32) -> Int32
    ) {
        let budget = DescriptorBudget(descriptorLimit: descriptorLimit, requestedCap: configuration.connectionLimit)
        core = ServerCore(
            router: router, configuration: configuration, metrics: metrics, clock: clock,
            wallClock: wallClock, budget: budget, accept: accept)
    }

    /// Dropped without `shutdown()` (a failed test, say): the loops close every connection and end.
    deinit { core.abandon() }

    public var configuration: HTTPServerConfiguration { core.configuration }
    public var metrics: MetricsRegistry { core.metrics }

    /// The port actually bound (useful with port 0).
    public var port: UInt16 { core.port }

    /// How the descriptors are shared: the connection cap actually applied, and what is kept back.
    public var budget: DescriptorBudget { core.budget }

    /// True while any loop has stopped accepting because descriptors ran out.
    var isAcceptPaused: Bool { core.isAcceptPaused }

    /// Open SSE streams now.
    public var openStreamCount: Int { core.openStreamCount }

    /// Open connections counted against the cap.
    public var openConnectionCount: Int { core.openConnectionCount }

    /// Open connections now in `phase` (for tests that wait for the engine to see their clients).
    func connectionCount(in phase: ConnectionDeadlines.Phase) -> Int { core.connectionCount(in: phase) }

    /// Each open connection's bytes queued for its client, and whether its requests wait for the client to read.
    func backlogs() -> [(bytes: Int, waiting: Bool)] { core.backlogs() }

    /// Closes connections past their receive deadlines and answers handlers past theirs.
    func enforceDeadlines(now: Duration) { core.enforceDeadlines(now: now) }

    /// Binds and starts serving on the event loops.
    public func start() throws { try core.start() }

    /// Stops accepting, lets in-flight requests finish, ends streams cleanly, then stops.
    public func shutdown() async { await core.shutdown() }
}

/// The server's state, shared by its loops and connections; it never refers to the `HTTPServer` that owns it,
/// so a server dropped without `shutdown()` can stop its loops before anything it holds is gone.
final class ServerCore: @unchecked Sendable {
    let configuration: HTTPServerConfiguration
    let metrics: MetricsRegistry
    let router: Router
    let clock: any Clock<Duration>
    let limits: ConnectionDeadlines.Limits
    let budget: DescriptorBudget
    private let accept: @Sendable (Int32) -> Int32
    /// Time on `clock` since the server was made.
    let elapsed: @Sendable () -> Duration
    private let wallClock: @Sendable () -> Date
    private var loops: [EventLoop] = []
    private var listener: Int32 = -1
    private var listenPort: UInt16 = 0
    private let nextLoop = Atomic<Int>(0)
    private let serials = Atomic<UInt64>(0)
    private let inFlight = Atomic<Int>(0)
    private let openStreams = Atomic<Int>(0)
    private let webSockets = Atomic<Int>(0)
    private let draining = Atomic<Bool>(false)
    private let stopped = Atomic<Bool>(false)
    private let loopsEnded = Mutex<(count: Int, waiters: [CheckedContinuation<Void, Never>])>((0, []))
    /// Every open connection, for the deadline timer, the cap's eviction and the counts; touched on open and close
    /// only.
    private let registry = Mutex<(connections: [Connection], evicted: Int)>(([], 0))
    private let streams = Mutex<[ObjectIdentifier: StreamSink]>([:])
    private let sockets = Mutex<[ObjectIdentifier: UpgradedSocket]>([:])
    private var timer: Task<Void, Never>?
    /// How often the timer sends due heartbeats and enforces deadlines.
    static let timerTick: Duration = .milliseconds(500)
    /// The most of an over-limit body read and discarded to answer 413 rather than drop the connection.
    static let maxDiscardedBody = 32 * 1024 * 1024

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
        nextHeartbeat = configuration.heartbeatInterval
        limits = .init(
            header: configuration.headerTimeout, body: configuration.bodyTimeout,
            idle: .seconds(Int(configuration.idleTimeoutSeconds)), request: configuration.requestDeadline)
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

    /// Stops the loops without the shutdown's grace (the server was dropped): every connection is closed as it is.
    func abandon() {
        timer?.cancel()
        guard !loops.isEmpty, !draining.exchange(true, ordering: .acquiringAndReleasing) else { return }
        stopped.store(true, ordering: .releasing)
        for loop in loops {
            loop.stopListening {}
            loop.stop()
        }
        let last = ContinuousClock.now.advanced(by: .seconds(3))
        while loops.contains(where: { !$0.hasEnded }), ContinuousClock.now < last { usleep(1_000) }
        if listener >= 0 { close(listener) }
        listener = -1
    }

    var port: UInt16 { listenPort }

    var openStreamCount: Int { openStreams.load(ordering: .relaxed) }

    var openConnectionCount: Int { registry.withLock { $0.connections.count - $0.evicted } }

    func connectionCount(in phase: ConnectionDeadlines.Phase) -> Int {
        registry.withLock { $0.connections }.count { $0.phase == phase }
    }

    func backlogs() -> [(bytes: Int, waiting: Bool)] { registry.withLock { $0.connections }.map(\.backlog) }

    var isDraining: Bool { draining.load(ordering: .relaxed) }

    var isAcceptPaused: Bool { loops.contains { $0.isListenerPaused } }

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

    // MARK: - Connections

    /// A socket accepted on `acceptor`: it joins the loops in turn, so connections spread evenly over them.
    private func accepted(_ fd: Int32, on acceptor: EventLoop) {
        let loop = loops[
            Int(UInt(bitPattern: nextLoop.wrappingAdd(1, ordering: .relaxed).oldValue) % UInt(loops.count))]
        if loop === acceptor {
            adopt(fd, on: loop)
        } else {
            loop.post { [self] in adopt(fd, on: loop) }
        }
    }

    /// Makes the connection for `fd` on its loop and counts it against the cap.
    private func adopt(_ fd: Int32, on loop: EventLoop) {
        let limit = budget.connectionCap, headroom = budget.refusalHeadroom
        loop.adopt(fd) { token in
            let serial = serials.wrappingAdd(1, ordering: .relaxed).newValue
            let connection = Connection(fd: fd, token: token, loop: loop, server: self, serial: serial, now: elapsed())
            let (accepted, victim) = registry.withLock { r -> (Bool, Connection?) in
                // Headroom above the cap, so that excess clients can be told 503 rather than left hanging.
                guard r.connections.count < limit + headroom else { return (false, nil) }
                connection.registryIndex = r.connections.count
                r.connections.append(connection)
                guard r.connections.count - r.evicted > limit else { return (true, nil) }
                // Only connections still waiting for (or trickling) a request head give way: a handler at work or a
                // stream is never cut for a newcomer. The oldest of them is the likeliest slow client.
                var victim: (connection: Connection, deadlines: ConnectionDeadlines)?
                for other in r.connections where other !== connection {
                    let candidate = other.lock.withLock { () -> ConnectionDeadlines? in
                        other.evicted || !other.deadlines.mayGiveWay ? nil : other.deadlines
                    }
                    guard let candidate else { continue }
                    if let best = victim, !ConnectionDeadlines.givesWayBefore(candidate, best.deadlines) { continue }
                    victim = (other, candidate)
                }
                guard let victim else {
                    connection.lock.withLock { connection.refused = true }
                    return (true, nil)
                }
                victim.connection.lock.withLock { victim.connection.evicted = true }
                r.evicted += 1
                return (true, victim.connection)
            }
            guard accepted else { return nil }
            if let victim {
                countCut(reason: "evicted")  // before the cut, as for deadlines
                victim.cut()
            }
            return connection
        }
    }

    func connectionClosed(_ connection: Connection, wasEvicted: Bool) {
        registry.withLock { r in
            let index = connection.registryIndex
            guard index >= 0, index < r.connections.count, r.connections[index] === connection else { return }
            let last = r.connections.removeLast()
            if index < r.connections.count {
                r.connections[index] = last
                last.registryIndex = index
            }
            connection.registryIndex = -1
            if wasEvicted { r.evicted -= 1 }
        }
    }

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

    // MARK: - Timer

    /// Runs `body` at each tick of a fixed schedule that starts now, not when the task first runs, and
    /// sleeps to each tick rather than "a tick from now": a test clock advanced past several ticks (even
    /// before the task starts) wakes the loop for each, and the last wake sees the final time.
    private static func repeating<C: Clock>(
        on clock: C, every tick: Duration,
        _ body: @escaping @Sendable () -> Bool
    ) -> Task<Void, Never> where C.Duration == Duration {
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
        // Descriptors other than connections' may have been freed since a loop stopped accepting.
        for loop in loops where loop.isListenerPaused { loop.resumeListening() }
    }

    func enforceDeadlines(now: Duration) {
        var cuts: [Connection] = [], overdue: [Connection] = []
        for connection in registry.withLock({ $0.connections }) {
            switch connection.expire(now: now, limits: limits) {
            case .close?: cuts.append(connection)
            case .timeOut?: overdue.append(connection)
            case nil: break
            }
        }
        // Counted before the sockets go, so whoever sees a connection end also sees it counted.
        if !cuts.isEmpty { countCut(reason: "deadline", cuts.count) }
        for connection in cuts { connection.cut() }
        guard !overdue.isEmpty else { return }
        metrics.increment(
            "enroute_request_deadline_exceeded_total", by: Double(overdue.count),
            help: "Handlers answered 503 and cancelled at the request deadline.")
        let seconds = configuration.requestDeadline.components.seconds
        for connection in overdue {
            connection.timeOut(
                HTTPError.unavailable(
                    retryAfterSeconds: 1,
                    detail: "The request took longer than its \(seconds)-second deadline; try again shortly."
                ).response)
        }
    }

    private func countCut(reason: String, _ count: Int = 1) {
        metrics.increment(
            "enroute_connections_cut_total", labels: ["reason": reason], by: Double(count),
            help: "Connections closed by the server: past a receive deadline, or making way for a newcomer at the cap.")
    }

    // MARK: - Shutdown

    func shutdown() async {
        guard !loops.isEmpty, !draining.exchange(true, ordering: .acquiringAndReleasing) else { return }
        // The listener is closed once no loop polls it any more.
        await withTaskGroup(of: Void.self) { group in
            for loop in loops {
                group.addTask { await withCheckedContinuation { done in loop.stopListening { done.resume() } } }
            }
        }
        if listener >= 0 { close(listener) }
        listener = -1
        for sink in streams.withLock({ Array($0.values) }) { sink.finish() }
        for socket in sockets.withLock({ Array($0.values) }) {
            socket.close(code: WebSocketCloseCode.goingAway, reason: "server shutting down")
        }
        let deadline = ContinuousClock.now.advanced(by: configuration.shutdownGrace)
        while ContinuousClock.now < deadline,
            inFlight.load(ordering: .acquiring) > 0 || openStreams.load(ordering: .acquiring) > 0
                || webSockets.load(ordering: .acquiring) > 0
        {
            try? await Task.sleep(for: .milliseconds(10))
        }
        // Past the grace period whatever still runs is answered or ended now: a handler still running gets the 503 its
        // deadline would give, a stream its end.
        let unavailable = HTTPError.unavailable(retryAfterSeconds: 1, detail: "The server is shutting down.").response
        for connection in registry.withLock({ $0.connections }) where connection.hasRequestInFlight {
            connection.timeOut(unavailable)
        }
        for sink in streams.withLock({ Array($0.values) }) { sink.abandon() }
        // The loops close what is left (kept-alive connections, sockets that did not finish) and end.
        stopped.store(true, ordering: .releasing)
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            let resumeNow = loopsEnded.withLock { state -> Bool in
                if state.count == loops.count { return true }
                state.waiters.append(done)
                return false
            }
            if resumeNow { done.resume() }
            for loop in loops { loop.stop() }
        }
        timer?.cancel()
    }

    private func loopEnded() {
        let waiters = loopsEnded.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.count += 1
            guard state.count == loops.count else { return [] }
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }
}
