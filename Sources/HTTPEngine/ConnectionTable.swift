/// Where each open connection is in its request, with the deadline that phase runs to, on the
/// server's clock: the receive deadlines, the per-request deadline and the connection cap's
/// eviction order are decided here; `HTTPServer` performs what it returns.
///
/// Times are offsets on the server's clock. A connection's head (request line and headers) runs to
/// `headerTimeout` from the accept, or from its request line on a kept-alive connection; a kept-alive
/// connection waits at most the idle timeout (from its last answer) for the next request line, however
/// slowly bytes trickle in; a body runs to `bodyTimeout` from the end of the headers; an async handler
/// runs to `requestDeadline`. Streams and upgraded connections have no deadline.
struct ConnectionTable<Request> {
    /// The deadlines, as durations on the server's clock.
    struct Limits {
        var header: Duration
        var body: Duration
        var idle: Duration
        var request: Duration
    }

    enum Phase: Equatable {
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

    /// What the server must do when a deadline passes or the cap is exceeded.
    enum Action {
        /// Shut the socket down: libmicrohttpd then sees the end and closes the connection.
        case close(fd: Int32)
        /// The handler overran: answer 503 and cancel it.
        case timeOut(Request)
    }

    private struct Entry {
        let fd: Int32
        /// Order of arrival, to break ties between equal `since` times.
        let serial: UInt64
        var phase: Phase
        /// When the phase began (the eviction order).
        var since: Duration
        var deadline: Duration?
        var request: Request?
        /// A stream that ends with the request (SSE), after which the connection may be kept alive.
        var streamEndsWithRequest = false
        /// Shut down and no longer counted against the cap, but not yet gone.
        var evicted = false
    }

    let limits: Limits
    private var entries: [UInt: Entry] = [:]
    private var evictedCount = 0
    private var serials: UInt64 = 0

    init(limits: Limits) { self.limits = limits }

    /// Connections counted against the cap (those shut down and on their way out are not).
    var liveCount: Int { entries.count - evictedCount }

    /// How many live connections are in `phase`.
    func count(in phase: Phase) -> Int { entries.values.count { !$0.evicted && $0.phase == phase } }

    /// A new connection; past `limit`, the one that has waited longest for its request is shut down.
    mutating func opened(_ id: UInt, fd: Int32, now: Duration, limit: Int) -> Action? {
        serials += 1
        entries[id] = Entry(fd: fd, serial: serials, phase: .head, since: now, deadline: now + limits.header)
        guard liveCount > limit else { return nil }
        // Only connections still waiting for (or trickling) a request head give way: a handler at work
        // or a stream is never cut for a newcomer. The oldest of them is the likeliest slow client.
        var victim: (id: UInt, since: Duration, serial: UInt64)?
        for (key, entry) in entries where key != id && !entry.evicted
            && (entry.phase == .head || entry.phase == .awaitingRequest) {
            if let best = victim, (best.since, best.serial) < (entry.since, entry.serial) { continue }
            victim = (key, entry.since, entry.serial)
        }
        guard let victim, var entry = entries[victim.id] else { return nil }
        entry.evicted = true
        entry.deadline = nil
        entries[victim.id] = entry
        evictedCount += 1
        return .close(fd: entry.fd)
    }

    /// libmicrohttpd has the request line; a kept-alive connection's head deadline starts now.
    mutating func requestLineReceived(_ id: UInt, now: Duration) {
        let limits = self.limits
        update(id) { entry in
            guard entry.phase == .awaitingRequest else { return }
            entry.phase = .head
            entry.since = now
            entry.deadline = now + limits.header
        }
    }

    /// The headers are in; the body (if any) runs to its own deadline.
    mutating func headersReceived(_ id: UInt, now: Duration) {
        let limits = self.limits
        update(id) { entry in
            guard entry.phase == .head || entry.phase == .awaitingRequest else { return }
            entry.phase = .body
            entry.since = now
            entry.deadline = now + limits.body
        }
    }

    /// The request is complete and its handler runs; `request` is set for handlers that can overrun.
    mutating func dispatched(_ id: UInt, request: Request?, now: Duration) {
        let limits = self.limits
        update(id) { entry in
            guard entry.phase != .exempt else { return }
            entry.phase = .busy
            entry.since = now
            entry.request = request
            entry.deadline = request == nil ? nil : now + limits.request
        }
    }

    /// The handlers still running that can be answered early (every `request` given to `dispatched` and not
    /// yet `answered`).
    var pendingRequests: [Request] { entries.values.compactMap(\.request) }

    /// An answer is queued: the handler's deadline no longer applies.
    mutating func answered(_ id: UInt) {
        update(id) { entry in
            guard entry.phase != .exempt else { return }
            entry.phase = .busy
            entry.request = nil
            entry.deadline = nil
        }
    }

    /// A stream or upgrade began: no deadline from here on (the stream's end brings `completed`).
    mutating func exempted(_ id: UInt, permanently: Bool) {
        update(id) { entry in
            entry.phase = .exempt
            entry.request = nil
            entry.deadline = nil
            entry.streamEndsWithRequest = !permanently
        }
    }

    /// The request is over; the connection waits for the next one.
    mutating func completed(_ id: UInt, now: Duration) {
        let limits = self.limits
        update(id) { entry in
            if entry.phase == .exempt && !entry.streamEndsWithRequest { return }
            entry.phase = .awaitingRequest
            entry.streamEndsWithRequest = false
            entry.since = now
            entry.request = nil
            entry.deadline = now + limits.idle
        }
    }

    /// libmicrohttpd closed the connection.
    mutating func closed(_ id: UInt) {
        if let entry = entries.removeValue(forKey: id), entry.evicted { evictedCount -= 1 }
    }

    /// Everything whose deadline has passed at `now`; each is returned once.
    mutating func expired(now: Duration) -> [Action] {
        var actions: [Action] = []
        for (id, entry) in entries {
            guard let deadline = entry.deadline, deadline <= now else { continue }
            var next = entry
            next.deadline = nil
            if entry.phase == .busy, let request = entry.request {
                next.request = nil
                actions.append(.timeOut(request))
            } else {
                // Shut down but still counted until libmicrohttpd closes it: it frees its slot soon anyway.
                actions.append(.close(fd: entry.fd))
            }
            entries[id] = next
        }
        return actions
    }

    private mutating func update(_ id: UInt, _ change: (inout Entry) -> Void) {
        guard var entry = entries[id], !entry.evicted else { return }
        change(&entry)
        entries[id] = entry
    }
}
