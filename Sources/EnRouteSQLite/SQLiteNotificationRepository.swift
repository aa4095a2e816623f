public import Foundation
public import EnRouteNotifications

/// `DeviceRepository` and `NotificationLedger` over `SQLiteNotificationStore`.
public struct SQLiteNotificationRepository: DeviceRepository, NotificationLedger {
    public let store: SQLiteNotificationStore

    public init(store: SQLiteNotificationStore) { self.store = store }

    /// Opens the notification tables in the database at `path`.
    public init(path: String) throws { self.store = try SQLiteNotificationStore(path: path) }

    public func register(_ device: DeviceRecord) async throws { try store.upsert(device) }

    public func remove(token: String, accountId: String) async throws -> Bool {
        try store.delete(token: token, accountId: accountId)
    }

    public func removeUnlessRegistered(after invalidSince: Date, token: String) async throws -> Bool {
        try store.delete(token: token, registeredNotAfter: invalidSince)
    }

    public func devices(accountId: String) async throws -> [DeviceRecord] { try store.devices(accountId: accountId) }

    public func device(token: String) async throws -> DeviceRecord? { try store.device(token: token) }

    public func recordSent(_ notification: SentNotification) async throws { try store.insert(notification) }

    public func recordOpen(id: String, accountId: String, action: String, at: Date) async throws -> OpenOutcome {
        try store.markOpened(id: id, accountId: accountId, action: action, at: at)
    }
}
