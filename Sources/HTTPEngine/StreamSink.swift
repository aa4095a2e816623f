import Synchronization

/// An SSE stream on a connection: once its head is out, events are written to the socket by whoever
/// publishes them (framed as HTTP/1.1 chunks when the reply is chunked), and the connection's loop
/// watches for room and hang-up. The stream holds no buffer of its own and the connection lets go of
/// its input buffer, so an idle stream costs little more than its socket.
final class StreamSink: EventSink, LiveMember, ConnectionStream, @unchecked Sendable {
    private let connection: Connection
    /// HTTP/1.1 chunks; an HTTP/1.0 stream is the raw bytes and ends with the connection.
    let chunked: Bool
    /// Whether the connection serves the next request after the stream's end.
    let keepAlive: Bool
    private let maxBuffered: Int
    private let leave = LeaveNotice()
    private let producer = Mutex<(task: Task<Void, Never>?, released: Bool)>((nil, false))

    init(connection: Connection, chunked: Bool, keepAlive: Bool) {
        self.connection = connection
        self.chunked = chunked
        self.keepAlive = keepAlive
        self.maxBuffered = connection.server.configuration.maxStreamBuffer
    }

    /// Holds the producer's task, cancelled when the stream goes.
    func start(producer task: Task<Void, Never>?) {
        guard let task else { return }
        let cancel = producer.withLock { p -> Bool in
            p.task = task
            return p.released
        }
        if cancel { task.cancel() }
    }

    func write(_ bytes: [UInt8]) -> Bool {
        connection.streamWrite(self, chunked ? LiveFrames.chunk(bytes) : bytes, limit: maxBuffered) == .written
    }

    func deliver(_ frames: LiveFrames) -> Bool {
        connection.streamWrite(self, chunked ? frames.sseChunk : frames.sse, limit: maxBuffered) == .written
    }

    func finish() { connection.endStream(self, failed: false) }

    /// Ended by its channel, under the channel's lock: no call back into it.
    func end() {
        leave.cancel()
        finish()
    }

    /// Turned away by its channel, under the channel's lock: the revocation's events, then the end.
    func revoke(_ frames: LiveFrames) {
        leave.cancel()
        if !frames.sse.isEmpty { _ = deliver(frames) }
        finish()
    }

    /// Ends the stream now, dropping what the client has not read (the shutdown's last word).
    func abandon() { connection.endStream(self, failed: true) }

    func onLeave(_ handler: @escaping @Sendable () -> Void) { leave.set(handler) }

    /// The stream is over (ended, or the client left): stop the producer and tell the channel and the server.
    func released() {
        let task = producer.withLock { p -> Task<Void, Never>? in
            p.released = true
            defer { p.task = nil }
            return p.task
        }
        task?.cancel()
        leave.fire()
        connection.server.streamEnded(self)
    }
}
