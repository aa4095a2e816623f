public import HTTPTransport
import Foundation

/// An `HTTPClient` over libcurl: one multi handle on one thread, with connections reused across requests.
///
/// Cancelling the calling task aborts its transfer. Streams feed `SSEParser` from curl's write callback and
/// fail with `HTTPClientError.unexpectedStatus` on anything but 200.
public final class CurlHTTPClient: HTTPClient {
    private let engine: CurlMultiEngine
    private let defaultTimeout: Duration

    /// A client whose requests give up after `defaultTimeout` unless they carry their own.
    public init(defaultTimeout: Duration = .seconds(30)) {
        self.engine = CurlMultiEngine()
        self.defaultTimeout = defaultTimeout
    }

    deinit { engine.shutdown() }

    public func send(_ request: HTTPClientRequest) async throws -> HTTPClientResponse {
        try Task.checkCancellation()
        let transfer = try CurlTransfer(request: request, streaming: false, timeout: request.timeout ?? defaultTimeout)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                engine.submit(transfer, respond: { continuation.resume(with: $0) })
            }
        } onCancel: {
            engine.cancel(transfer)
        }
    }

    public func events(_ request: HTTPClientRequest) -> AsyncThrowingStream<ServerSentEvent, any Error> {
        AsyncThrowingStream { continuation in
            var request = request
            if request.headers["Accept"] == nil { request.headers["Accept"] = "text/event-stream" }
            request.headers["Cache-Control"] = "no-cache"
            do {
                // For a stream the timeout bounds connecting and each silence, never the whole stream.
                let transfer = try CurlTransfer(
                    request: request, streaming: true, timeout: request.timeout ?? defaultTimeout)
                transfer.events = continuation
                continuation.onTermination = { [engine] _ in engine.cancel(transfer) }
                engine.submit(transfer)
            } catch {
                continuation.finish(throwing: error)
            }
        }
    }
}
