public import Foundation

/// One HTTP request as the client kit sends it.
public struct HTTPClientRequest: Sendable, Equatable {
    public var method: String
    public var url: URL
    public var headers: [String: String]
    public var body: Data?
    /// Gives up after this long without a complete answer; nil for the transport's default.
    public var timeout: Duration?

    public init(
        method: String = "GET", url: URL, headers: [String: String] = [:], body: Data? = nil, timeout: Duration? = nil
    ) {
        self.method = method; self.url = url; self.headers = headers; self.body = body; self.timeout = timeout
    }
}

/// A complete HTTP answer.
public struct HTTPClientResponse: Sendable, Equatable {
    public var status: Int
    /// Header names lower-cased.
    public var headers: [String: String]
    public var body: Data

    public init(status: Int, headers: [String: String] = [:], body: Data = Data()) {
        self.status = status
        self.headers = Dictionary(
            headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { _, last in last })
        self.body = body
    }

    /// The value of a header, by case-insensitive name.
    public func header(_ name: String) -> String? { headers[name.lowercased()] }
}

/// One Server-Sent Event as dispatched by the parser.
public struct ServerSentEvent: Sendable, Equatable {
    /// The `event:` field, "message" when absent.
    public var event: String
    public var data: String
    /// The last-event-ID in force when this event was dispatched.
    public var id: String?
    public init(event: String = "message", data: String, id: String? = nil) {
        self.event = event; self.data = data; self.id = id
    }
}

/// Errors every HTTPClient implementation reports the same way.
public enum HTTPClientError: Error, Sendable, Equatable {
    /// The request did not complete within its timeout.
    case timedOut
    /// No connection could be made, or it broke.
    case network(String)
    /// A stream answered with something other than 200 `text/event-stream`.
    case unexpectedStatus(Int, body: Data)
}

/// Requests and SSE streams, for the client kits and the server's adapters alike. The caller owns it; tests fake it.
public protocol HTTPClient: Sendable {
    /// Sends one request and returns the whole answer; any status is an answer, not an error.
    /// Throws `CancellationError` when the calling task is cancelled.
    func send(_ request: HTTPClientRequest) async throws -> HTTPClientResponse

    /// Opens an SSE stream; finishes when the server ends it, throws on a non-200 answer or a broken
    /// connection, and closes the connection when the consumer stops iterating.
    func events(_ request: HTTPClientRequest) -> AsyncThrowingStream<ServerSentEvent, any Error>
}
