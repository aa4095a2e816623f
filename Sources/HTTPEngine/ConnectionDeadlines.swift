/// Where one connection is in its request, with the deadline that phase runs to, on the server's clock:
/// the receive deadlines, the per-request deadline and the connection cap's eviction order are decided
/// here; the connection performs what it returns.
///
/// Times are offsets on the server's clock. A connection's head (request line and headers) runs to the
/// header timeout from the accept, or from its request line on a kept-alive connection; a kept-alive
/// connection waits at most the idle timeout (from its last answer) for the next request line, however
/// slowly bytes trickle in; a body runs to the body timeout from the end of the headers; an async handler
/// runs to the request deadline. Whatever the phase, a connection that receives nothing for the idle
/// timeout while it owes us bytes is closed. Streams and upgraded connections have no deadline.
struct ConnectionDeadlines {
    /// The deadlines, as durations on the server's clock.
    struct Limits: Sendable {
        var header: Duration
        var body: Duration
        var idle: Duration
        var request: Duration
    }

    enum Phase: Equatable, Sendable {
        /// Kept alive after an answer, waiting for the next request line.
        case awaitingRequest
        /// Receiving the request line and headers.
        case head
        /// Receiving the body.
        case body
        /// A handler is running or an answer is going out.
        case busy
        /// A stream or an upgraded socket: never reaped or evicted.
        case exempt
    }

    /// What to do when a deadline passes.
    enum Expiry: Equatable {
        /// Shut the socket down.
        case close
        /// The handler overran: answer 503 and cancel it.
        case timeOut
    }

    /// Order of arrival, to break ties between equal `since` times.
    let serial: UInt64
    private(set) var phase = Phase.head
    /// When the phase began (the eviction order).
    private(set) var since: Duration
    private(set) var deadline: Duration?
    /// When the client last sent anything, for the idle timeout while we wait on it.
    private var lastReceived: Duration
    /// A running handler that the deadline answers.
    private var overrunnable = false
    /// A stream that ends with the request (SSE), after which the connection may be kept alive.
    private var streamEndsWithRequest = false
    /// Closed by a deadline already: nothing more is due.
    private var reaped = false

    /// A connection accepted at `now`: its head runs to the header deadline.
    init(serial: UInt64, now: Duration, limits: Limits) {
        self.serial = serial
        since = now
        lastReceived = now
        deadline = now + limits.header
    }

    /// Whether the connection may give way to a newcomer over the cap: only one waiting for (or trickling) a head.
    var mayGiveWay: Bool { phase == .head || phase == .awaitingRequest }

    /// Bytes arrived at `now`.
    mutating func received(now: Duration) { lastReceived = now }

    /// The request line is in; a kept-alive connection's head deadline starts now.
    mutating func requestLineReceived(now: Duration, limits: Limits) {
        guard phase == .awaitingRequest else { return }
        phase = .head
        since = now
        deadline = now + limits.header
    }

    /// The headers are in; the body (if any) runs to its own deadline.
    mutating func headersReceived(now: Duration, limits: Limits) {
        guard phase == .head || phase == .awaitingRequest else { return }
        phase = .body
        since = now
        deadline = now + limits.body
    }

    /// The request is complete and its handler runs; `overrunnable` for handlers the deadline answers.
    mutating func dispatched(now: Duration, overrunnable: Bool, limits: Limits) {
        guard phase != .exempt else { return }
        phase = .busy
        since = now
        self.overrunnable = overrunnable
        deadline = overrunnable ? now + limits.request : nil
    }

    /// An answer is going out: the handler's deadline no longer applies.
    mutating func answered() {
        guard phase != .exempt else { return }
        phase = .busy
        overrunnable = false
        deadline = nil
    }

    /// A stream or upgrade began: no deadline from here on.
    mutating func exempted(permanently: Bool) {
        phase = .exempt
        overrunnable = false
        deadline = nil
        streamEndsWithRequest = !permanently
    }

    /// The answer is out; the connection waits for the next request.
    mutating func completed(now: Duration, limits: Limits) {
        if phase == .exempt && !streamEndsWithRequest { return }
        phase = .awaitingRequest
        streamEndsWithRequest = false
        overrunnable = false
        since = now
        lastReceived = now
        deadline = now + limits.idle
    }

    /// What is due at `now`, once: each deadline acts a single time.
    mutating func expired(now: Duration, limits: Limits) -> Expiry? {
        if phase == .busy, overrunnable, let deadline, deadline <= now {
            self.deadline = nil
            overrunnable = false
            return .timeOut
        }
        guard !reaped, phase != .exempt, phase != .busy else { return nil }
        let due = deadline.map { $0 <= now } ?? false
        let silent = lastReceived + limits.idle <= now
        guard due || silent else { return nil }
        deadline = nil
        reaped = true
        return .close
    }

    /// True when `a` gives way before `b`: the one that has waited longest in its phase, the earliest arrival at a tie.
    static func givesWayBefore(_ a: ConnectionDeadlines, _ b: ConnectionDeadlines) -> Bool {
        (a.since, a.serial) < (b.since, b.serial)
    }
}
