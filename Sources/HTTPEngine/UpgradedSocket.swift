import Synchronization

/// An upgraded connection speaking WebSocket: the connection's loop feeds it what the client sends, and its
/// frames go out through the connection (from any thread), which drops a client too far behind.
final class UpgradedSocket: WebSocketTransport, LiveMember, ConnectionSocket, @unchecked Sendable {
    private struct State {
        var codec: WebSocketCodec
        var finished = false
        /// Cuts off a client that does not answer our close; cancelled once the socket is finished.
        var closeTimer: Task<Void, Never>?
    }

    private let connection: Connection
    private let state: Mutex<State>
    private let continuation: AsyncStream<WebSocketMessage>.Continuation
    private let maxOutbound: Int
    private let leave = LeaveNotice()
    private let clock: any Clock<Duration>
    private let closeTimeout: Duration
    /// Runs once when the connection is gone (the server cancels the session's task and counts the socket out).
    private let onFinish = Mutex<(@Sendable () -> Void)?>(nil)

    /// `clock` times the close handshake: a client that does not answer a close within the configured time is cut off.
    init(
        connection: Connection, configuration: HTTPServerConfiguration, clock: any Clock<Duration>,
        continuation: AsyncStream<WebSocketMessage>.Continuation
    ) {
        self.connection = connection
        self.clock = clock
        self.closeTimeout = configuration.webSocketCloseTimeout
        self.state = Mutex(State(codec: WebSocketCodec(maxMessageSize: configuration.maxWebSocketMessage)))
        self.continuation = continuation
        self.maxOutbound = configuration.maxWebSocketOutbound
    }

    /// Sets what runs once the connection is gone; at once if it already is.
    func whenFinished(_ handler: @escaping @Sendable () -> Void) {
        let now = state.withLock { s -> Bool in
            if s.finished { return true }
            onFinish.withLock { $0 = handler }
            return false
        }
        if now { handler() }
    }

    var isOpen: Bool { state.withLock { !$0.finished && !$0.codec.closeSent } }

    func write(_ frame: [UInt8]) -> Bool {
        let result = state.withLock { s -> Connection.StreamWrite in
            guard !s.finished, !s.codec.closeSent else { return .gone }
            return connection.socketWrite(self, frame, limit: maxOutbound)
        }
        return result == .written
    }

    func close(code: UInt16, reason: String) {
        let started = state.withLock { s -> Bool in
            guard !s.finished, let frame = s.codec.startClose(code: code, reason: reason) else { return false }
            // A client too far behind to take the close is cut off instead.
            _ = connection.socketWrite(self, frame, limit: maxOutbound)
            return true
        }
        guard started else { return }
        // The client should answer with its own close; don't wait for it forever.
        let timer = Task { [weak self, clock, closeTimeout] in
            do { try await clock.sleep(for: closeTimeout) } catch { return }
            self?.connection.cut()
        }
        // A timer left asleep after the socket is done would keep its clock's sleeper (and a test's manual clock with
        // everything it holds) alive.
        let finished = state.withLock { s -> Bool in
            if !s.finished { s.closeTimer?.cancel(); s.closeTimer = timer }
            return s.finished
        }
        if finished { timer.cancel() }
    }

    /// Bytes from the client (the loop's thread).
    func feed(_ bytes: [UInt8]) {
        let actions = state.withLock { s -> [WebSocketCodec.Action] in
            guard !s.finished else { return [] }
            return s.codec.receive(bytes)
        }
        for action in actions {
            switch action {
            case .deliver(let message):
                continuation.yield(message)
            case .write(let bytes):
                // A pong counts against the same limit as data: a client that pings and never reads is dropped.
                _ = connection.socketWrite(self, bytes, limit: maxOutbound)
            case .closeAfterWrite(let bytes, _):
                _ = connection.socketWrite(self, bytes, limit: maxOutbound)
                connection.closeAfterFlush()
                finish()
            }
        }
        // Both closes exchanged: the handshake is over.
        let done = state.withLock { $0.codec.closeSent && $0.codec.closeReceived }
        if done {
            connection.closeAfterFlush()
            finish()
        }
    }

    /// The connection is closed (the loop's thread).
    func connectionClosed() { finish() }

    /// The session is over, once: the close handshake ended (the connection lingers to deliver the last frame) or
    /// the connection is gone.
    private func finish() {
        let (first, timer) = state.withLock { s -> (Bool, Task<Void, Never>?) in
            defer { s.finished = true; s.closeTimer = nil }
            return (!s.finished, s.closeTimer)
        }
        guard first else { return }
        timer?.cancel()
        continuation.finish()
        onFinish.withLock { handler in
            defer { handler = nil }
            return handler
        }?()
        leave.fire()
    }

    // MARK: LiveMember

    func deliver(_ frames: LiveFrames) -> Bool {
        let ok = write(frames.webSocket)
        if !ok {
            // The channel drops a member whose delivery failed; it must not be called back from inside.
            leave.cancel()
            connection.cut()
        }
        return ok
    }

    func end() {
        leave.cancel()
        close(code: WebSocketCloseCode.normal, reason: "")
    }

    /// Turned away by its channel: the watcher may no longer follow what the socket carries (RFC 6455 §7.4.1).
    func revoke(_ frames: LiveFrames) {
        leave.cancel()
        close(code: WebSocketCloseCode.policyViolation, reason: "access ended")
    }

    func onLeave(_ handler: @escaping @Sendable () -> Void) { leave.set(handler) }
}
