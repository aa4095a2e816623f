import Foundation
public import HTTPTransport
import EnRouteModels

/// Holds taps until the UI takes them, drops repeats by ID, and reports each open with `POST
/// /v1/notifications/{id}/opened`. Never throws.
public actor RemoteNotificationInboxRepository: NotificationInbox, NotificationOpens, TapSink {
    private struct Taps {
        var seen: Set<NotificationID> = []
        var waiting: [NotificationTap] = []
        var subscribers: [UInt64: AsyncStream<NotificationTap>.Continuation] = [:]
        var nextID: UInt64 = 0
        var signedOut: Set<AccountID> = []
    }

    private let http: any HTTPClient
    private let server: APIServer
    private let clock: any Clock<Duration>
    private let retryDelays: [Duration]
    // Taps live behind a lock so `taps()` subscribes synchronously: nothing slips between subscribe and replay.
    private nonisolated let state = Locked(Taps())
    private var reported: Set<NotificationID> = []

    /// An inbox reporting opens over `http` to `server`; `clock` paces the retries.
    public init(
        http: any HTTPClient, server: APIServer, clock: any Clock<Duration>,
        retryDelays: [Duration] = [.seconds(1), .seconds(3), .seconds(10)]
    ) {
        self.http = http
        self.server = server
        self.clock = clock
        self.retryDelays = retryDelays
    }

    // MARK: NotificationInbox

    public nonisolated func taps() -> AsyncStream<NotificationTap> {
        let (stream, continuation) = AsyncStream<NotificationTap>.makeStream()
        let id: UInt64 = state.withLock { s in
            for tap in s.waiting { continuation.yield(tap) }
            s.waiting.removeAll()
            s.nextID += 1
            s.subscribers[s.nextID] = continuation
            return s.nextID
        }
        continuation.onTermination = { [weak self] _ in self?.unsubscribe(id) }
        return stream
    }

    private nonisolated func unsubscribe(_ id: UInt64) {
        _ = state.withLock { $0.subscribers.removeValue(forKey: id) }
    }

    // MARK: TapSink

    public func receive(_ tap: NotificationTap) {
        state.withLock { s in
            if let account = tap.accountID, s.signedOut.contains(account) { return }
            guard s.seen.insert(tap.id).inserted else { return }
            if s.subscribers.isEmpty {
                s.waiting.append(tap)
            } else {
                for continuation in s.subscribers.values { continuation.yield(tap) }
            }
        }
    }

    public func accountSignedOut(_ account: AccountID) {
        state.withLock { s in
            s.signedOut.insert(account)
            s.waiting.removeAll { $0.accountID == account }
        }
    }

    public func accountSignedIn(_ account: AccountID) {
        _ = state.withLock { $0.signedOut.remove(account) }
    }

    // MARK: NotificationOpens

    public func markOpened(_ tap: NotificationTap) async {
        guard reported.insert(tap.id).inserted else { return }
        // An unstructured task: the caller's cancellation does not reach the report.
        let report = Task { await self.send(tap) }
        await report.value
    }

    private func send(_ tap: NotificationTap) async {
        let path = APIPath.notificationOpened(tap.id.rawValue)
        for attempt in 0...retryDelays.count {
            if attempt > 0 {
                do { try await clock.sleep(for: retryDelays[attempt - 1]) } catch { return }
            }
            do {
                let request = try await server.request(
                    "POST", path, json: NotificationOpenedBody(action: tap.action.rawValue), timeout: .seconds(10))
                let response = try await http.send(request)
                // 2xx landed; other 4xx will never land (unknown id, another account): stop either way.
                if response.status < 500, response.status != 408, response.status != 429 { return }
            } catch {
                continue
            }
        }
    }
}
