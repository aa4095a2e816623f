import Foundation
public import HTTPTransport
public import HTTPEngine

/// An `HTTPClient` that runs requests through a server's `Router` in-process: no sockets, same code.
///
/// Client-kit contract tests use it so the kit and the server cannot drift.
public struct InProcessHTTPClient: HTTPClient {
    public let router: Router

    public init(router: Router) { self.router = router }

    public func send(_ request: HTTPClientRequest) async throws -> HTTPClientResponse {
        try Task.checkCancellation()
        let response = await router.respond(to: Self.serverRequest(request))
        var headers: [String: String] = [:]
        for field in response.headers { headers[field.name] = field.value }
        return HTTPClientResponse(status: response.status, headers: headers, body: Data(response.bodyBytes))
    }

    public func events(_ request: HTTPClientRequest) -> AsyncThrowingStream<ServerSentEvent, any Error> {
        AsyncThrowingStream { continuation in
            let task = Task {
                let response = await router.respond(to: Self.serverRequest(request))
                guard response.status == 200, case .eventStream(let stream) = response.body else {
                    continuation.finish(
                        throwing: HTTPClientError.unexpectedStatus(response.status, body: Data(response.bodyBytes)))
                    return
                }
                var parser = SSEParser()
                for await chunk in stream.bytes() {
                    for event in parser.feed(chunk) { continuation.yield(event) }
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    static func serverRequest(_ request: HTTPClientRequest) -> HTTPRequest {
        let components = URLComponents(url: request.url, resolvingAgainstBaseURL: true)
        var query: [String: String] = [:]
        for item in components?.queryItems ?? [] { query[item.name] = item.value ?? "" }
        return HTTPRequest(
            method: request.method, path: components?.path ?? request.url.path, query: query,
            headers: HTTPHeaders(request.headers.map { ($0.key, $0.value) }), body: Array(request.body ?? Data()))
    }
}
