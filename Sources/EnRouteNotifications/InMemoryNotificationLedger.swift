public import Foundation
import Synchronization

/// Sent notifications and opens in memory, for tests.
public final class InMemoryNotificationLedger: NotificationLedger {
    private let state = Mutex<(sent: [String: SentNotification], opened: Set<String>)>(([:], []))

    public init() {}

    public func recordSent(_ notification: SentNotification) async throws {
        state.withLock { s in if s.sent[notification.id] == nil { s.sent[notification.id] = notification } }
    }

    public func recordOpen(id: String, accountId: String, action: String, at: Date) async throws -> OpenOutcome {
        state.withLock { s in
            guard let sent = s.sent[id], sent.accountId == accountId else { return .unknown }
            return s.opened.insert(id).inserted ? .firstOpen(sent) : .repeated
        }
    }
}
