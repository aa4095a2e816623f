import TestSupport
import Foundation
import Synchronization
import HTTPTransport

/// An `HTTPClient` in front of another that loses requests, loses answers, sends twice or answers 503 on a plan.
///
/// `dropResponse` is the hard case: the server applies the request and the client never learns it.
final class FaultInjectingHTTPClient: HTTPClient {
    enum Fault: String, Sendable, CaseIterable {
        case none, dropRequest, dropResponse, duplicate, serverError
    }

    private let inner: any HTTPClient
    private let plan: Mutex<(Int, HTTPClientRequest) -> Fault>
    private let log = Mutex<[(HTTPClientRequest, Fault)]>([])
    private let offline = Mutex(false)
    private let sequence = Mutex(0)

    /// Wraps `inner`; `plan` picks the fault for the `n`th request (from 1).
    init(wrapping inner: any HTTPClient, plan: sending @escaping (Int, HTTPClientRequest) -> Fault) {
        self.inner = inner
        self.plan = Mutex(plan)
    }

    /// Fails `rate` of requests with a fault chosen by a generator seeded with `seed`.
    static func random(wrapping inner: any HTTPClient, seed: UInt64, rate: Double = 0.3) -> FaultInjectingHTTPClient {
        var random = SeededRandom(seed: seed)
        let faults: [Fault] = [.dropRequest, .dropResponse, .duplicate, .serverError]
        return FaultInjectingHTTPClient(wrapping: inner) { _, _ in
            Double.random(in: 0..<1, using: &random) < rate ? faults.randomElement(using: &random)! : .none
        }
    }

    /// Every request seen, with the fault applied to it.
    var requests: [(request: HTTPClientRequest, fault: Fault)] { log.withLock { $0.map { ($0.0, $0.1) } } }

    /// How many requests met `fault`.
    func count(_ fault: Fault) -> Int { log.withLock { $0.filter { $0.1 == fault }.count } }

    /// While true, every request fails as if there were no network.
    var isOffline: Bool {
        get { offline.withLock { $0 } }
        set { offline.withLock { $0 = newValue } }
    }

    func send(_ request: HTTPClientRequest) async throws -> HTTPClientResponse {
        if isOffline {
            log.withLock { $0.append((request, .dropRequest)) }
            throw HTTPClientError.network("offline")
        }
        let n = sequence.withLock {
            $0 += 1; return $0
        }
        let fault = plan.withLock { $0(n, request) }
        log.withLock { $0.append((request, fault)) }
        switch fault {
        case .none:
            return try await inner.send(request)
        case .dropRequest:
            throw HTTPClientError.network("request lost")
        case .dropResponse:
            _ = try await inner.send(request)
            throw HTTPClientError.network("response lost")
        case .duplicate:
            async let first = inner.send(request)
            async let second = inner.send(request)
            let answers = try await (first, second)
            return answers.0
        case .serverError:
            return HTTPClientResponse(
                status: 503, headers: ["Content-Type": "application/problem+json"],
                body: Data(#"{"type":"about:blank","title":"Unavailable","status":503}"#.utf8))
        }
    }

    func events(_ request: HTTPClientRequest) -> AsyncThrowingStream<ServerSentEvent, any Error> {
        inner.events(request)
    }
}
