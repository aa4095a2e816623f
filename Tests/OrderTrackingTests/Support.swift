import Foundation
import Synchronization
import Testing
import HTTPTransport
import EnRouteModels
@testable import OrderTracking

/// Snapshots and times shared by the tests. `t0` is ManualClock's default start (18:13:20 UTC).
enum Fixture {
    static let t0 = Date(timeIntervalSince1970: 1_792_520_000)
    static let home = Coordinate(lat: 52.53, lng: 13.41)

    /// 2026-10-20 at hh:mm:ss UTC.
    static func at(_ hh: Int, _ mm: Int, _ ss: Int = 0) -> Date {
        Date(timeIntervalSince1970: 1_792_454_400 + Double(hh * 3600 + mm * 60 + ss))
    }

    static func snapshot(
        _ order: OrderID = "8F3K", version: Int, status: OrderStatus = .onTheWay,
        eta: ClosedRange<Date>? = nil, fixAt: Date? = nil,
        generatedAt: Date = t0
    ) -> OrderTracking {
        OrderTracking(
            orderID: order, version: version, status: status, eta: eta,
            rider: fixAt.map {
                RiderFix(coordinate: Coordinate(lat: 52.52, lng: 13.40), recordedAt: $0, firstName: "Ana")
            },
            destination: home, generatedAt: generatedAt)
    }
}

/// A `TrackingStream` and `OrderTrackingRepository` the test feeds by hand; one subscriber only.
final class FedSnapshots: OrderTrackingRepository, TrackingStream {
    let stream: AsyncStream<OrderTracking>
    private let continuation: AsyncStream<OrderTracking>.Continuation
    private let subscribed = Mutex(false)

    init() { (stream, continuation) = AsyncStream.makeStream(of: OrderTracking.self) }

    func snapshots() -> AsyncStream<OrderTracking> {
        let again = subscribed.withLock { old in
            defer { old = true }; return old
        }
        if again { Issue.record("snapshots() subscribed twice") }
        return stream
    }

    func feed(_ snapshots: OrderTracking...) { for s in snapshots { continuation.yield(s) } }
}

/// A repository that must never be asked for its stream (for tests that apply snapshots directly).
struct UnusedRepository: OrderTrackingRepository {
    func snapshots() -> AsyncStream<OrderTracking> {
        Issue.record("snapshots() was not expected")
        return AsyncStream { $0.finish() }
    }
}

/// A `TrackingRefresher` that fails the test unless told what to answer; logs every call.
final class FakeRefresher: TrackingRefresher {
    enum Call: Hashable, Sendable { case active, order(OrderID) }
    typealias OrderHandler = @Sendable (OrderID) async throws -> OrderTracking
    typealias ActiveHandler = @Sendable () async throws -> [OrderTracking]

    private struct State {
        var calls: [Call] = []
        var onRefresh: OrderHandler?
        var onRefreshActive: ActiveHandler?
    }
    private let state = Mutex(State())

    var calls: [Call] { state.withLock { $0.calls } }
    func orderCalls() -> Int { calls.filter { $0 != .active }.count }
    func answer(refresh handler: @escaping OrderHandler) { state.withLock { $0.onRefresh = handler } }
    func answer(refreshActive handler: @escaping ActiveHandler) { state.withLock { $0.onRefreshActive = handler } }

    func refreshActive() async throws -> [OrderTracking] {
        let handler = state.withLock { s in
            s.calls.append(.active); return s.onRefreshActive
        }
        guard let handler else { Issue.record("unexpected refreshActive()"); throw FakeError.unexpected }
        return try await handler()
    }

    func refresh(_ order: OrderID) async throws -> OrderTracking {
        let handler = state.withLock { s in
            s.calls.append(.order(order)); return s.onRefresh
        }
        guard let handler else { Issue.record("unexpected refresh(\(order))"); throw FakeError.unexpected }
        return try await handler(order)
    }
}

enum FakeError: Error { case unexpected, offline }

/// A one-shot gate a fake can wait on, ignoring cancellation, until the test opens it.
final class Gate: Sendable {
    private let state = Mutex<(open: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    func wait() async {
        await withCheckedContinuation { (cont: CheckedContinuation<Void, Never>) in
            let resume = state.withLock { s -> Bool in
                if s.open { return true }
                s.waiters.append(cont)
                return false
            }
            if resume { cont.resume() }
        }
    }

    var waiting: Int { state.withLock { $0.waiters.count } }

    func open() {
        let waiters = state.withLock { s -> [CheckedContinuation<Void, Never>] in
            s.open = true
            defer { s.waiters = [] }
            return s.waiters
        }
        for waiter in waiters { waiter.resume() }
    }
}

/// An `HTTPClient` that fails the test unless told how to answer; logs every request.
final class FakeHTTPClient: HTTPClient {
    typealias Handler = @Sendable (HTTPClientRequest) async throws -> HTTPClientResponse
    private struct State {
        var requests: [HTTPClientRequest] = []
        var handler: Handler?
        var events: [ServerSentEvent]?
    }
    private let state = Mutex(State())

    var requests: [HTTPClientRequest] { state.withLock { $0.requests } }
    func answer(_ handler: @escaping Handler) { state.withLock { $0.handler = handler } }
    func answerEvents(_ events: [ServerSentEvent]) { state.withLock { $0.events = events } }

    func send(_ request: HTTPClientRequest) async throws -> HTTPClientResponse {
        let handler = state.withLock { s in
            s.requests.append(request); return s.handler
        }
        guard let handler else {
            Issue.record("unexpected \(request.method) \(request.url)"); throw FakeError.unexpected
        }
        return try await handler(request)
    }

    func events(_ request: HTTPClientRequest) -> AsyncThrowingStream<ServerSentEvent, any Error> {
        let events = state.withLock { s in
            s.requests.append(request); return s.events
        }
        return AsyncThrowingStream { continuation in
            guard let events else {
                Issue.record("unexpected stream \(request.url)")
                continuation.finish(throwing: FakeError.unexpected)
                return
            }
            for event in events { continuation.yield(event) }
            continuation.finish()
        }
    }
}

extension TrackingFreshnessPolicy {
    /// 24-hour times in UTC, for tests that don't care about locale.
    static let utc = TrackingFreshnessPolicy(
        locale: Locale(identifier: "en_GB"), timeZone: TimeZone(identifier: "UTC")!)
}
