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

    let produce: @Sendable (EventStreamWriter) async throws -> Void

    public init(produce: @escaping @Sendable (EventStreamWriter) async throws -> Void) { self.produce = produce }

    /// Runs the producer against `sink`, writing the `retry:` preamble first; returns when it ends.
    func run(sink: any EventSink, retryMilliseconds: Int) async {
        let writer = EventStreamWriter(sink: sink)
        guard sink.write(Array("retry: \(retryMilliseconds)\n\n".utf8)) else { return }
        do { try await produce(writer) } catch {}
        sink.finish()
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
        guard sink.write(Self.encode(event: event, id: id, data: data)) else { throw EventStreamClosed() }
    }

    /// Sends a comment line (ignored by clients; keeps proxies from timing out).
    public func comment(_ text: String = "") throws {
        guard sink.write(Array(": \(text)\n\n".utf8)) else { throw EventStreamClosed() }
    }

    /// The wire form of one event: `id`, optional `event`, one `data:` line per line of `data`.
    static func encode(event: String?, id: String, data: String) -> [UInt8] {
        var text = "id: \(id)\n"
        if let event { text += "event: \(event)\n" }
        for line in data.split(separator: "\n", omittingEmptySubsequences: false) {
            text += "data: \(line)\n"
        }
        text += "\n"
        return Array(text.utf8)
    }
}

/// An in-memory sink: the bytes come out as an AsyncStream (used for in-process clients and tests).
final class MemoryEventSink: EventSink, @unchecked Sendable {
    private let continuation: AsyncStream<[UInt8]>.Continuation
    private let open = Atomic<Bool>(true)

    init(continuation: AsyncStream<[UInt8]>.Continuation) { self.continuation = continuation }

    func write(_ bytes: [UInt8]) -> Bool {
        guard open.load(ordering: .acquiring) else { return false }
        if case .terminated = continuation.yield(bytes) { open.store(false, ordering: .releasing); return false }
        return true
    }

    func finish() {
        open.store(false, ordering: .releasing)
        continuation.finish()
    }
}

extension EventStream {
    /// Runs the stream in memory: the returned sequence yields the raw `text/event-stream` bytes,
    /// and cancelling its consumer closes the stream as a client disconnect would.
    public func bytes(retryMilliseconds: Int = 3000) -> AsyncStream<[UInt8]> {
        AsyncStream { continuation in
            let sink = MemoryEventSink(continuation: continuation)
            let task = Task { await self.run(sink: sink, retryMilliseconds: retryMilliseconds) }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}
