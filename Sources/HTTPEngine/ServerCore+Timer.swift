extension ServerCore {
    /// How often the timer sends due heartbeats and enforces deadlines.
    static let timerTick: Duration = .milliseconds(500)

    /// Runs `body` at each tick of a fixed schedule that starts now, not when the task first runs, and
    /// sleeps to each tick rather than "a tick from now": a test clock advanced past several ticks (even
    /// before the task starts) wakes the loop for each, and the last wake sees the final time. `state` is the task's
    /// own, handed to each run of `body`.
    private static func repeating<C: Clock, State: Sendable>(
        on clock: C, every tick: Duration, state: State,
        _ body: @escaping @Sendable (inout State) -> Bool
    ) -> Task<Void, Never> where C.Duration == Duration {
        let first = clock.now.advanced(by: tick)
        return Task {
            var next = first, state = state
            while !Task.isCancelled {
                do { try await clock.sleep(until: next, tolerance: nil) } catch { return }
                guard body(&state) else { return }
                next = next.advanced(by: tick)
            }
        }
    }

    // One timer for every stream's heartbeat and every connection's deadline, rather than a task each.
    func startTimer() {
        let clock: any Clock<Duration> = self.clock
        let body: @Sendable (inout Duration) -> Bool = { [weak self] nextHeartbeat in
            guard let self else { return false }
            self.tick(nextHeartbeat: &nextHeartbeat)
            return true
        }
        timer = Self.repeating(on: clock, every: Self.timerTick, state: configuration.heartbeatInterval, body)
    }

    /// Sends the heartbeat if it is due at `nextHeartbeat` (and moves that on), and enforces the deadlines.
    private func tick(nextHeartbeat: inout Duration) {
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
            switch connection.expire(now: now) {
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

    func countCut(reason: String, _ count: Int = 1) {
        metrics.increment(
            "enroute_connections_cut_total", labels: ["reason": reason], by: Double(count),
            help: "Connections closed by the server: past a receive deadline, or making way for a newcomer at the cap.")
    }
}
