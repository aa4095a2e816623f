import Foundation

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
    /// The ids of requests that bring no `X-Request-Id` of their own.
    public var requestIDs = RequestIDs.counting(prefix: "r\(UInt32.random(in: 0...UInt32.max))")

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
