public import Foundation
public import EnRouteNotifications

/// `DeviceRepository` and `NotificationLedger` over `SQLiteNotificationStore`.
public struct SQLiteNotificationRepository: DeviceRepository, NotificationLedger {
    public let store: SQLiteNotificationStore

    public init(store: SQLiteNotificationStore) { self.store = store }

    /// Opens the notification tables in the database at `path`.
    public init(path: String) throws { self.store = try SQLiteNotificationStore(path: path) }

    public func register(_ device: DeviceRecord) async throws {
        try store.upsert(.init(token: device.token, accountId: device.accountId, platform: device.platform, environment: device.environment.rawValue,
                               appVersion: device.appVersion, publicKey: device.publicKey, registeredAt: device.registeredAt))
    }

    public func remove(token: String, accountId: String) async throws -> Bool { try store.delete(token: token, accountId: accountId) }

    public func removeUnlessRegistered(after invalidSince: Date, token: String) async throws -> Bool {
        try store.delete(token: token, registeredNotAfter: invalidSince)
    }

    public func devices(accountId: String) async throws -> [DeviceRecord] { try store.devices(accountId: accountId).map(Self.record) }

    public func device(token: String) async throws -> DeviceRecord? { try store.device(token: token).map(Self.record) }

    public func recordSent(_ notification: SentNotification) async throws {
        try store.insert(.init(id: notification.id, accountId: notification.accountId, campaign: notification.campaign,
                               stage: notification.stage, sentAt: notification.sentAt))
    }

    public func recordOpen(id: String, accountId: String, action: String, at: Date) async throws -> OpenOutcome {
        switch try store.markOpened(id: id, accountId: accountId, action: action, at: at) {
        case .first(let n): .firstOpen(SentNotification(id: n.id, accountId: n.accountId, campaign: n.campaign, stage: n.stage, sentAt: n.sentAt))
        case .repeated: .repeated
        case .unknown: .unknown
        }
    }

    private static func record(_ d: SQLiteNotificationStore.Device) -> DeviceRecord {
        DeviceRecord(token: d.token, accountId: d.accountId, platform: d.platform, environment: APNsEnvironment(wire: d.environment) ?? .production,
                     appVersion: d.appVersion, publicKey: d.publicKey, registeredAt: d.registeredAt)
    }
}
