import Synchronization

/// A Server-Sent Events body: the producer writes events until it returns or the client goes away.
public struct EventStream: Sendable {
    /// The headers every SSE answer carries.
    public static var headers: HTTPHeaders {
        var h = HTTPHeaders()
        h.add("Content-Type", "text/event-stream; charset=utf-8")
        h.add("Cache-Control", "no-store")
        h.add("X-Accel-Buffering", "no")
        return h
    }

    /// Where the events come from: a task writing them, or a channel the stream joins.
    enum Source: Sendable {
        case producer(@Sendable (EventStreamWriter) async throws -> Void)
        case channel(@Sendable (any LiveMember) -> Void)
    }
    let source: Source

    public init(produce: @escaping @Sendable (EventStreamWriter) async throws -> Void) { source = .producer(produce) }

    init(join: @escaping @Sendable (any LiveMember) -> Void) { source = .channel(join) }

    /// The `retry:` preamble every stream starts with.
    static func preamble(retryMilliseconds: Int) -> [UInt8] { Array("retry: \(retryMilliseconds)\n\n".utf8) }

    /// Starts the stream on `sink` after the preamble: a producer task (returned, to be cancelled when
    /// the client leaves), or a channel membership that needs no task.
    func start(sink: any EventSink & LiveMember, retryMilliseconds: Int) -> Task<Void, Never>? {
        guard sink.write(Self.preamble(retryMilliseconds: retryMilliseconds)) else { return nil }
        switch source {
        case .producer(let produce):
            let writer = EventStreamWriter(sink: sink)
            return Task {
                do { try await produce(writer) } catch {}
                sink.finish()
            }
        case .channel(let join):
            join(sink)
            return nil
        }
    }
}

/// Raised by a write when the client has gone or fell too far behind.
public struct EventStreamClosed: Error, Sendable {}

/// Where an event stream's bytes go: a socket, or memory in tests.
protocol EventSink: Sendable {
    /// Queues bytes; false when the stream is closed (client gone, or its buffer overflowed).
    func write(_ bytes: [UInt8]) -> Bool
    /// Ends the stream after what is queued.
    func finish()
}

/// Writes events to one SSE client. Every event has an `id:` so the client can resume.
public struct EventStreamWriter: Sendable {
    let sink: any EventSink

    /// Sends one event; throws `EventStreamClosed` once the client is gone or too slow.
    public func send(event: String? = nil, id: String, data: String) throws {
        try write(Self.encode(event: event, id: id, data: Array(data.utf8)))
    }

    /// Writes bytes already in `text/event-stream` form.
    func write(_ bytes: [UInt8]) throws {
        guard sink.write(bytes) else { throw EventStreamClosed() }
    }

    /// Sends a comment line (ignored by clients; keeps proxies from timing out).
    public func comment(_ text: String = "") throws {
        guard sink.write(Array(": \(text)\n\n".utf8)) else { throw EventStreamClosed() }
    }

    /// The wire form of one event: `id`, optional `event`, one `data:` line per line of `data`.
    static func encode(event: String?, id: String, data: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(data.count + id.utf8.count + (event?.utf8.count ?? 0) + 24)
        out += Array("id: ".utf8) + Array(id.utf8) + [10]
        if let event { out += Array("event: ".utf8) + Array(event.utf8) + [10] }
        for line in data.split(separator: 10, omittingEmptySubsequences: false) {
            out += Array("data: ".utf8)
            out += line
            out.append(10)
        }
        out.append(10)
        return out
    }
}

/// An in-memory sink: the bytes come out as an AsyncStream (used for in-process clients and tests).
final class MemoryEventSink: EventSink, LiveMember, @unchecked Sendable {
    private let continuation: AsyncStream<[UInt8]>.Continuation
    private let open = Atomic<Bool>(true)
    private let leave = LeaveNotice()

    init(continuation: AsyncStream<[UInt8]>.Continuation) { self.continuation = continuation }

    func write(_ bytes: [UInt8]) -> Bool {
        guard open.load(ordering: .acquiring) else { return false }
        if case .terminated = continuation.yield(bytes) { open.store(false, ordering: .releasing); return false }
        return true
    }

    func finish() {
        // Ended by its producer or its channel, which drops it itself.
        open.store(false, ordering: .releasing)
        leave.cancel()
        continuation.finish()
    }

    func deliver(_ frames: LiveFrames) -> Bool { write(frames.sse) }

    func end() { finish() }

    func revoke(_ frames: LiveFrames) {
        if !frames.sse.isEmpty { _ = write(frames.sse) }
        finish()
    }

    func onLeave(_ handler: @escaping @Sendable () -> Void) { leave.set(handler) }

    /// The consumer went away.
    func consumerLeft() {
        open.store(false, ordering: .releasing)
        leave.fire()
    }
}

extension EventStream {
    /// Runs the stream in memory: the returned sequence yields the raw `text/event-stream` bytes,
    /// and cancelling its consumer closes the stream as a client disconnect would.
    public func bytes(retryMilliseconds: Int = 3000) -> AsyncStream<[UInt8]> {
        AsyncStream { continuation in
            let sink = MemoryEventSink(continuation: continuation)
            let producer = Mutex<Task<Void, Never>?>(nil)
            continuation.onTermination = { _ in
                producer.withLock { $0?.cancel() }
                sink.consumerLeft()
            }
            let task = start(sink: sink, retryMilliseconds: retryMilliseconds)
            producer.withLock { $0 = task }
        }
    }
}
