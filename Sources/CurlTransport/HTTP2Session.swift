public import HTTPTransport
public import Foundation

/// HTTP/2 over TLS (ALPN `h2`) to one origin on libcurl's multi engine: every request multiplexes onto one
/// connection, which stays open between requests (curl built with nghttp2).
///
/// No cleartext prior-knowledge mode: Debian's libcurl 7.88 cannot reuse such a connection (curl issue 10634,
/// fixed in curl 8.0), and APNs needs TLS anyway.
///
/// Any HTTP status is an answer (`HTTPClientResponse`, with headers and body). `send` throws only when no
/// answer came: `HTTPClientError.network` (no connection, TLS refused, connection broken),
/// `HTTPClientError.timedOut`, or `CancellationError` when the calling task is cancelled.
public final class HTTP2Session: Sendable {
    /// One request on the session: a path on its origin.
    public struct Request: Sendable {
        public var method: String
        /// The path and query, starting with `/`.
        public var path: String
        /// Header fields in order; an empty value removes a header curl would add itself (`Accept`).
        public var headers: [(String, String)]
        public var body: Data?
        /// Gives up after this long without a complete answer; nil for the session's default.
        public var timeout: Duration?

        /// A request for `path`; a `body` without a `content-type` header is sent without one.
        public init(
            method: String = "GET", path: String, headers: [(String, String)] = [], body: Data? = nil,
            timeout: Duration? = nil
        ) {
            self.method = method; self.path = path; self.headers = headers; self.body = body; self.timeout = timeout
        }
    }

    private let engine: CurlMultiEngine
    private let origin: String
    private let options: CurlTransfer.Options
    private let defaultTimeout: Duration

    /// A session to `origin` (`https://host:port`). `caFile` is a PEM file of certificates to trust (a local
    /// stand-in's); `connectTimeout` bounds connecting within each request's timeout.
    public init(
        origin: String, caFile: String? = nil, defaultTimeout: Duration = .seconds(30),
        connectTimeout: Duration = .seconds(10)
    ) {
        self.origin = origin.hasSuffix("/") ? String(origin.dropLast()) : origin
        self.options = CurlTransfer.Options(http2: .alpn, caFile: caFile, connectTimeout: connectTimeout)
        self.defaultTimeout = defaultTimeout
        self.engine = CurlMultiEngine(name: "enroute.h2", oneConnectionPerHost: true)
    }

    deinit { engine.shutdown() }

    /// Sends `request` on the session's connection, opening it when none is open.
    public func send(_ request: Request) async throws -> HTTPClientResponse {
        try Task.checkCancellation()
        let transfer = try CurlTransfer(
            url: origin + request.path, method: request.method, headers: request.headers, body: request.body,
            streaming: false, timeout: request.timeout ?? defaultTimeout, options: options)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                engine.submit(transfer, respond: { continuation.resume(with: $0) })
            }
        } onCancel: {
            engine.cancel(transfer)
        }
    }

    /// Gives up on the open connection: the next request opens a new one.
    public func reset() { engine.requireFreshConnection() }

    /// Connections opened so far (one while the connection holds).
    public var connectionsOpened: Int { engine.connectionsOpened }
}
