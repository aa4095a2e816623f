import Foundation
import Synchronization
import Testing
import HTTPTransport
import EnRouteModels

/// An `HTTPClient` that answers from a script in order and records every request; an unscripted call fails the test.
final class ScriptedHTTPClient: HTTPClient {
    /// A scripted SSE answer: these events, then the end (or a failure), or nothing more when it stays open.
    struct Feed: Sendable {
        var events: [ServerSentEvent]
        var failure: FakeError? = nil
        var staysOpen = false
    }

    private let answers: Mutex<[HTTPClientResponse]>
    private let feeds: Mutex<[Feed]>
    private let recorded = Mutex<[HTTPClientRequest]>([])
    private let feedClosed = Mutex(false)

    init(answers: [HTTPClientResponse] = [], feeds: [Feed] = []) {
        self.answers = Mutex(answers)
        self.feeds = Mutex(feeds)
    }

    var requests: [HTTPClientRequest] { recorded.withLock { $0 } }
    var isFeedClosed: Bool { feedClosed.withLock { $0 } }

    func send(_ request: HTTPClientRequest) async throws -> HTTPClientResponse {
        recorded.withLock { $0.append(request) }
        guard let answer = answers.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) else {
            Issue.record("unexpected request \(request.method) \(request.url)")
            throw FakeError(reason: "unexpected request")
        }
        return answer
    }

    func events(_ request: HTTPClientRequest) -> AsyncThrowingStream<ServerSentEvent, any Error> {
        recorded.withLock { $0.append(request) }
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: ServerSentEvent.self)
        continuation.onTermination = { [self] _ in feedClosed.withLock { $0 = true } }
        guard let feed = feeds.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) else {
            Issue.record("unexpected stream \(request.url)")
            continuation.finish(throwing: FakeError(reason: "unexpected stream"))
            return stream
        }
        for event in feed.events { continuation.yield(event) }
        if !feed.staysOpen { continuation.finish(throwing: feed.failure) }
        return stream
    }
}

extension HTTPClientResponse {
    /// A 200 (or `status`) JSON answer with `value` encoded on the wire coder.
    static func json(_ value: some Encodable, status: Int = 200) throws -> HTTPClientResponse {
        HTTPClientResponse(
            status: status, headers: ["Content-Type": "application/json"], body: try WireCoding.encoder().encode(value))
    }
}
