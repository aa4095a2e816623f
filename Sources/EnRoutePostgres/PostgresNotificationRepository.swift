public import Foundation
public import EnRouteNotifications
import PostgresClient

/// `DeviceRepository` and `NotificationLedger` on PostgreSQL: device tokens and sent notifications in `push_devices`
/// and
/// `push_notifications` (migrated by `notification_migrations`), on the trip store's connections.
public struct PostgresNotificationRepository: DeviceRepository, NotificationLedger {
    /// Schema migrations of the notification tables, applied in order once each.
    static let migrations: [String] = [
        """
        CREATE TABLE push_devices (
            token TEXT COLLATE "C" PRIMARY KEY, account_id TEXT NOT NULL, platform TEXT NOT NULL, environment \
        TEXT NOT NULL,
            app_version TEXT NOT NULL, public_key BYTEA, registered_at DOUBLE PRECISION NOT NULL);
        CREATE INDEX push_devices_account ON push_devices(account_id, registered_at);
        CREATE TABLE push_notifications (
            id TEXT PRIMARY KEY, account_id TEXT NOT NULL, campaign TEXT NOT NULL, stage TEXT NOT NULL, sent_at DOUBLE \
        PRECISION NOT NULL,
            opened_at DOUBLE PRECISION, open_action TEXT);
        CREATE INDEX push_notifications_sent ON push_notifications(sent_at);
        """
    ]

    private static let deviceColumns =
        "token, account_id, platform, environment, app_version, public_key, registered_at"

    private let store: PostgresTripStore

    /// Opens (creating if needed) the notification tables in `tripStore`'s database.
    public init(tripStore: PostgresTripStore, now: @Sendable () -> Date = { Date() }) throws {
        store = tripStore
        try store.migrateCompanion(Self.migrations, table: "notification_migrations", appliedAt: now())
    }

    public func register(_ device: DeviceRecord) async throws {
        try await store.perform { db in
            try db.run(
                """
                INSERT INTO push_devices (\(Self.deviceColumns)) VALUES ($1, $2, $3, $4, $5, $6, $7)
                ON CONFLICT (token) DO UPDATE SET account_id = EXCLUDED.account_id, platform = EXCLUDED.platform,
                environment = EXCLUDED.environment, app_version = EXCLUDED.app_version, public_key = \
                EXCLUDED.public_key,
                registered_at = EXCLUDED.registered_at
                """,
                [
                    .text(device.token), .text(device.accountId), .text(device.platform),
                    .text(device.environment.rawValue),
                    .text(device.appVersion), device.publicKey.map { .bytea($0) } ?? .null,
                    seconds(device.registeredAt),
                ])
        }
    }

    public func remove(token: String, accountId: String) async throws -> Bool {
        try await store.perform { db in
            try db.run(
                "DELETE FROM push_devices WHERE token = $1 AND account_id = $2", [.text(token), .text(accountId)]) > 0
        }
    }

    public func removeUnlessRegistered(after invalidSince: Date, token: String) async throws -> Bool {
        try await store.perform { db in
            try db.run(
                "DELETE FROM push_devices WHERE token = $1 AND registered_at <= $2",
                [.text(token), seconds(invalidSince)]) > 0
        }
    }

    public func devices(accountId: String) async throws -> [DeviceRecord] {
        try await store.perform { db in
            try db.query(
                "SELECT \(Self.deviceColumns) FROM push_devices WHERE account_id = $1 ORDER BY registered_at "
                    + "DESC, token DESC",
                [.text(accountId)]
            ).map(Self.device)
        }
    }

    public func device(token: String) async throws -> DeviceRecord? {
        try await store.perform { db in
            try db.query("SELECT \(Self.deviceColumns) FROM push_devices WHERE token = $1", [.text(token)]).first.map(
                Self.device)
        }
    }

    public func recordSent(_ notification: SentNotification) async throws {
        try await store.perform { db in
            try db.run(
                """
                INSERT INTO push_notifications (id, account_id, campaign, stage, sent_at) VALUES ($1, $2, $3, $4, $5) \
                ON CONFLICT (id) DO NOTHING
                """,
                [
                    .text(notification.id), .text(notification.accountId), .text(notification.campaign),
                    .text(notification.stage),
                    seconds(notification.sentAt),
                ])
        }
    }

    public func recordOpen(id: String, accountId: String, action: String, at: Date) async throws -> OpenOutcome {
        try await store.write { db in
            let rows = try db.query(
                "SELECT account_id, campaign, stage, sent_at, opened_at FROM push_notifications WHERE id = "
                    + "$1 FOR UPDATE",
                [.text(id)])
            guard let row = rows.first, row.text(0) == accountId else { return .unknown }
            guard row.isNull(4) else { return .repeated }
            try db.run(
                "UPDATE push_notifications SET opened_at = $2, open_action = $3 WHERE id = $1",
                [.text(id), seconds(at), .text(action)])
            return .firstOpen(
                SentNotification(
                    id: id, accountId: accountId, campaign: row.text(1) ?? "", stage: row.text(2) ?? "",
                    sentAt: Date(timeIntervalSince1970: row.double(3))))
        }
    }

    /// A device row; an environment this server never wrote reads as production.
    private static func device(_ row: PostgresRow) -> DeviceRecord {
        DeviceRecord(
            token: row.text(0) ?? "", accountId: row.text(1) ?? "", platform: row.text(2) ?? "",
            environment: APNsEnvironment(wire: row.text(3) ?? "") ?? .production,
            appVersion: row.text(4) ?? "", publicKey: row.isNull(5) ? nil : row.bytes(5),
            registeredAt: Date(timeIntervalSince1970: row.double(6)))
    }
}
