import Foundation
import Testing
import HTTPTransport
import NotificationsKit
import Synchronization

/// An HTTP client that answers from a script and records requests; an unscripted request fails the test.
final class ScriptedHTTPClient: HTTPClient {
    private let state = Mutex<(requests: [HTTPClientRequest], script: [Result<Int, HTTPClientError>])>(([], []))
    init(_ script: [Result<Int, HTTPClientError>]) { state.withLock { $0.script = script } }
    var requests: [HTTPClientRequest] { state.withLock { $0.requests } }

    func send(_ request: HTTPClientRequest) async throws -> HTTPClientResponse {
        let next: Result<Int, HTTPClientError>? = state.withLock { s in
            s.requests.append(request)
            return s.script.isEmpty ? nil : s.script.removeFirst()
        }
        guard let next else {
            Issue.record("unexpected request \(request.method) \(request.url.path)")
            throw HTTPClientError.network("unexpected")
        }
        return HTTPClientResponse(status: try next.get())
    }

    func events(_ request: HTTPClientRequest) -> AsyncThrowingStream<ServerSentEvent, any Error> {
        Issue.record("unexpected stream")
        return AsyncThrowingStream { $0.finish() }
    }
}

/// A session whose account the test sets.
final class FakeSession: Session {
    private let account: Mutex<AccountID?>
    init(_ account: AccountID?) { self.account = Mutex(account) }
    func set(_ account: AccountID?) { self.account.withLock { $0 = account } }
    func currentAccount() async -> AccountID? { account.withLock { $0 } }
}

/// Records reported opens; a test can wait for the n-th.
final class RecordingOpens: NotificationOpens {
    private let state = Mutex<(opened: [NotificationTap], waiters: [(Int, CheckedContinuation<Void, Never>)])>(([], []))
    var opened: [NotificationTap] { state.withLock { $0.opened } }

    func markOpened(_ tap: NotificationTap) async {
        let ready = state.withLock { s in
            s.opened.append(tap)
            let count = s.opened.count
            let ready = s.waiters.filter { $0.0 <= count }
            s.waiters.removeAll { $0.0 <= count }
            return ready
        }
        for waiter in ready { waiter.1.resume() }
    }

    func waitForOpens(_ count: Int) async {
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            let now = state.withLock { s -> Bool in
                if s.opened.count >= count { return true }
                s.waiters.append((count, c))
                return false
            }
            if now { c.resume() }
        }
    }
}

/// Opens that must not be reported.
struct NoOpens: NotificationOpens {
    func markOpened(_ tap: NotificationTap) async { Issue.record("unexpected open report for \(tap.id)") }
}

/// A permission the test scripts: the status now, and what each request leads to.
final class FakePermission: NotificationPermission {
    private let state: Mutex<(status: PushPermission, results: [PushPermission], requests: [Bool])>
    init(_ status: PushPermission, results: [PushPermission] = []) { state = Mutex((status, results, [])) }
    var requests: [Bool] { state.withLock { $0.requests } }
    func current() async -> PushPermission { state.withLock { $0.status } }
    func request(provisional: Bool) async -> PushPermission {
        state.withLock { s in
            s.requests.append(provisional)
            guard !s.results.isEmpty else {
                Issue.record("unexpected permission request (provisional: \(provisional))"); return s.status
            }
            s.status = s.results.removeFirst()
            return s.status
        }
    }
}

/// Device registration that records calls; `unregister` fails when offline.
final class RecordingRegistration: DeviceRegistration {
    enum Call: Equatable { case register(DeviceToken, AccountID?), unregister }
    private let state = Mutex<(calls: [Call], offline: Bool)>(([], false))
    var calls: [Call] { state.withLock { $0.calls } }
    func goOffline() { state.withLock { $0.offline = true } }
    func register(token: DeviceToken, for account: AccountID?) async throws {
        state.withLock { $0.calls.append(.register(token, account)) }
    }
    func unregister() async throws {
        let offline = state.withLock { s in
            s.calls.append(.unregister); return s.offline
        }
        if offline { throw HTTPClientError.network("offline") }
    }
}

/// The notification center: records what the engine asks for, in order.
@MainActor
final class FakeNotificationCenter: NotificationCenterClient {
    enum Call: Equatable {
        case setDelegate, setCategories(Set<NotificationCategory>), register, unregister, requestAuthorization(
            provisional: Bool)
    }
    private(set) var calls: [Call] = []
    var status: PushPermission = .notAsked
    var grant: PushPermission = .allowed

    func setDelegate(_ engine: NotificationEngine) { calls.append(.setDelegate) }
    func setCategories(_ categories: Set<NotificationCategory>) { calls.append(.setCategories(categories)) }
    func authorizationStatus() async -> PushPermission { status }
    func requestAuthorization(provisional: Bool) async throws -> Bool {
        calls.append(.requestAuthorization(provisional: provisional))
        status = provisional ? .quiet : grant
        return status != .denied
    }
    func registerForRemoteNotifications() { calls.append(.register) }
    func unregisterForRemoteNotifications() { calls.append(.unregister) }
}

func tap(
    _ id: String, account: String? = "a1", route: Route? = .order("8F3K"), action: TapAction = .open
) -> NotificationTap {
    NotificationTap(id: NotificationID(id), accountID: account.map { AccountID($0) }, route: route, action: action)
}

let testServer = APIServer(baseURL: URL(string: "http://enroute.test")!, credentials: StaticAccessToken("token-a1"))
