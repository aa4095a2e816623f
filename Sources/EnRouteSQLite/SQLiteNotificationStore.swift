public import Foundation
public import EnRouteNotifications
import SQLiteClient
import Synchronization

/// Device tokens and sent notifications on SQLite, in their own tables (created idempotently), read and
/// written as the notifications' own records. It may open the same file as `SQLiteTripStore`: WAL lets both
/// connections share it.
public final class SQLiteNotificationStore: @unchecked Sendable {
    private let db: Mutex<SQLiteDatabase>

    static let schema = """
        CREATE TABLE IF NOT EXISTS push_devices (
            token TEXT PRIMARY KEY, account_id TEXT NOT NULL, platform TEXT NOT NULL, environment TEXT NOT NULL,
            app_version TEXT NOT NULL, public_key BLOB, registered_at REAL NOT NULL);
        CREATE INDEX IF NOT EXISTS push_devices_account ON push_devices(account_id, registered_at);
        CREATE TABLE IF NOT EXISTS push_notifications (
            id TEXT PRIMARY KEY, account_id TEXT NOT NULL, campaign TEXT NOT NULL, stage TEXT NOT NULL, sent_at \
        REAL NOT NULL,
            opened_at REAL, open_action TEXT);
        CREATE INDEX IF NOT EXISTS push_notifications_sent ON push_notifications(sent_at);
        """

    /// Opens (creating if needed) the database at `path` and its notification tables.
    public init(path: String) throws {
        let database = try SQLiteDatabase(path: path)
        try database.execute(Self.schema)
        db = Mutex(database)
    }

    /// Inserts or replaces a token's row (moving it to another account if need be).
    public func upsert(_ device: DeviceRecord) throws {
        try db.withLock { db in
            try db.run(
                """
                INSERT INTO push_devices (token, account_id, platform, environment, app_version, public_key, \
                registered_at)
                VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
                ON CONFLICT(token) DO UPDATE SET account_id = ?2, platform = ?3, environment = ?4, app_version = ?5,
                    public_key = ?6, registered_at = ?7
                """,
                [
                    .text(device.token), .text(device.accountId), .text(device.platform),
                    .text(device.environment.rawValue),
                    .text(device.appVersion), device.publicKey.map { .blob($0) } ?? .null,
                    .real(device.registeredAt.timeIntervalSince1970),
                ])
        }
    }

    /// Deletes the token if `accountId` owns it; true when a row went.
    public func delete(token: String, accountId: String) throws -> Bool {
        try db.withLock { db in
            try db.run(
                "DELETE FROM push_devices WHERE token = ?1 AND account_id = ?2", [.text(token), .text(accountId)])
            return try db.query("SELECT changes()") { $0.int(0) }.first ?? 0 > 0
        }
    }

    /// Deletes the token unless it was registered after `cutoff`; true when a row went.
    public func delete(token: String, registeredNotAfter cutoff: Date) throws -> Bool {
        try db.withLock { db in
            try db.run(
                "DELETE FROM push_devices WHERE token = ?1 AND registered_at <= ?2",
                [.text(token), .real(cutoff.timeIntervalSince1970)])
            return try db.query("SELECT changes()") { $0.int(0) }.first ?? 0 > 0
        }
    }

    /// The account's devices, newest registration first.
    public func devices(accountId: String) throws -> [DeviceRecord] {
        try db.withLock { db in
            try db.query(
                """
                SELECT token, account_id, platform, environment, app_version, public_key, registered_at FROM \
                push_devices
                WHERE account_id = ?1 ORDER BY registered_at DESC, token DESC
                """, [.text(accountId)], Self.device)
        }
    }

    /// One token's row.
    public func device(token: String) throws -> DeviceRecord? {
        try db.withLock { db in
            try db.query(
                """
                SELECT token, account_id, platform, environment, app_version, public_key, registered_at FROM \
                push_devices WHERE token = ?1
                """, [.text(token)], Self.device
            ).first
        }
    }

    /// Remembers a sent notification; an existing id is left as it is.
    public func insert(_ notification: SentNotification) throws {
        try db.withLock { db in
            try db.run(
                "INSERT OR IGNORE INTO push_notifications (id, account_id, campaign, stage, sent_at) VALUES (?1, ?2, "
                    + "?3, ?4, ?5)",
                [
                    .text(notification.id), .text(notification.accountId), .text(notification.campaign),
                    .text(notification.stage),
                    .real(notification.sentAt.timeIntervalSince1970),
                ])
        }
    }

    /// Marks the notification opened by its own account, once.
    public func markOpened(id: String, accountId: String, action: String, at: Date) throws -> OpenOutcome {
        try db.withLock { db in
            try db.transaction {
                let rows = try db.query(
                    "SELECT account_id, campaign, stage, sent_at, opened_at FROM push_notifications WHERE id = ?1",
                    [.text(id)]
                ) { row in
                    (
                        SentNotification(
                            id: id, accountId: row.text(0) ?? "", campaign: row.text(1) ?? "", stage: row.text(2) ?? "",
                            sentAt: Date(timeIntervalSince1970: row.double(3))), row.isNull(4)
                    )
                }
                guard let (notification, unopened) = rows.first, notification.accountId == accountId else {
                    return .unknown
                }
                guard unopened else { return .repeated }
                try db.run(
                    "UPDATE push_notifications SET opened_at = ?2, open_action = ?3 WHERE id = ?1",
                    [.text(id), .real(at.timeIntervalSince1970), .text(action)])
                return .firstOpen(notification)
            }
        }
    }

    /// A device row; an environment this server never wrote reads as production.
    private static func device(_ row: SQLiteStatement) -> DeviceRecord {
        DeviceRecord(
            token: row.text(0) ?? "", accountId: row.text(1) ?? "", platform: row.text(2) ?? "",
            environment: APNsEnvironment(wire: row.text(3) ?? "") ?? .production,
            appVersion: row.text(4) ?? "", publicKey: row.isNull(5) ? nil : row.blob(5),
            registeredAt: Date(timeIntervalSince1970: row.double(6)))
    }
}
