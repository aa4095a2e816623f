public import Foundation

/// What `recordOpen` found.
public enum OpenOutcome: Sendable, Equatable {
    /// The first open of this notification: count it.
    case firstOpen(SentNotification)
    /// Already counted.
    case repeated
    /// No such notification for this account.
    case unknown
}

/// Sent notifications and their first opens.
public protocol NotificationLedger: Sendable {
    /// Remembers a sent notification; a second call for the same id changes nothing.
    func recordSent(_ notification: SentNotification) async throws
    /// Marks the notification opened by `accountId`, once.
    func recordOpen(id: String, accountId: String, action: String, at: Date) async throws -> OpenOutcome
}
