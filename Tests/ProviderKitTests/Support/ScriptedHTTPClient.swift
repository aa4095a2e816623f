import Foundation
import Synchronization
import Testing
import HTTPTransport
import EnRouteModels

/// An `HTTPClient` that answers from a script in order and records every request; an unscripted call fails the test.
final class ScriptedHTTPClient: HTTPClient {
    /// One scripted answer: a response, or a transport failure.
    enum Answer: Sendable {
        case response(HTTPClientResponse)
        case failure(HTTPClientError)
    }

    /// A scripted SSE answer: these events, then the end (or a failure), or nothing more when it stays open.
    struct Feed: Sendable {
        var events: [ServerSentEvent]
        var failure: HTTPClientError? = nil
        var staysOpen = false
    }

    private let answers: Mutex<[Answer]>
    private let feeds: Mutex<[Feed]>
    private let recorded = Mutex<[HTTPClientRequest]>([])

    init(answers: [Answer] = [], feeds: [Feed] = []) {
        self.answers = Mutex(answers)
        self.feeds = Mutex(feeds)
    }

    var requests: [HTTPClientRequest] { recorded.withLock { $0 } }

    func send(_ request: HTTPClientRequest) async throws -> HTTPClientResponse {
        recorded.withLock { $0.append(request) }
        guard let answer = answers.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) else {
            Issue.record("unexpected request \(request.method) \(request.url)")
            throw HTTPClientError.network("unexpected request")
        }
        switch answer {
        case .response(let response): return response
        case .failure(let error): throw error
        }
    }

    func events(_ request: HTTPClientRequest) -> AsyncThrowingStream<ServerSentEvent, any Error> {
        recorded.withLock { $0.append(request) }
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: ServerSentEvent.self)
        guard let feed = feeds.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) else {
            Issue.record("unexpected stream \(request.url)")
            continuation.finish(throwing: HTTPClientError.network("unexpected stream"))
            return stream
        }
        for event in feed.events { continuation.yield(event) }
        if !feed.staysOpen { continuation.finish(throwing: feed.failure) }
        return stream
    }
}

extension ScriptedHTTPClient.Answer {
    /// A JSON answer with `value` on the wire coder.
    static func json(_ value: some Encodable, status: Int = 200) throws -> Self {
        .response(
            HTTPClientResponse(
                status: status,
                headers: ["Content-Type": status >= 400 ? "application/problem+json" : "application/json"],
                body: try WireCoding.encoder().encode(value)))
    }
}
