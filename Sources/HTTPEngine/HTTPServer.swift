public import Foundation

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
