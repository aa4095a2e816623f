public import Foundation
public import EnRouteDomain
import SQLiteClient
import Synchronization

/// Share-link revocations on SQLite: one row per trip whose links were revoked (`share_links`, migrated by
/// `share_link_migrations`) in the trip database, written through the trip store's writer.
public final class SQLiteShareLinkStore: ShareLinkStore, @unchecked Sendable {
    /// Schema migrations of the revocation table, applied in order once each.
    static let migrations: [String] = [
        "CREATE TABLE share_links (trip_id TEXT PRIMARY KEY, generation INTEGER NOT NULL, revoked_at REAL NOT NULL);"
    ]

    private let writer: SQLiteWriter
    private let reader: Mutex<SQLiteDatabase>
    private let now: @Sendable () -> Date

    /// Opens (creating if needed) the revocation table in `tripStore`'s database.
    public init(tripStore: SQLiteTripStore, now: @escaping @Sendable () -> Date) throws {
        writer = tripStore.writer
        self.now = now
        reader = try tripStore.companionReader(
            migrations: Self.migrations, table: "share_link_migrations", appliedAt: now())
    }

    public func generation(tripId: String) throws -> Int {
        try reader.withLock { db in
            try db.query("SELECT generation FROM share_links WHERE trip_id = ?1", [.text(tripId)]) { Int($0.int(0)) }
        }.first ?? 0
    }

    public func revoke(tripId: String) async throws -> Int {
        let at = now().timeIntervalSince1970
        return try await writer.transaction { db in
            try db.run(
                """
                INSERT INTO share_links (trip_id, generation, revoked_at) VALUES (?1, 1, ?2)
                ON CONFLICT(trip_id) DO UPDATE SET generation = generation + 1, revoked_at = ?2
                """, [.text(tripId), .real(at)])
            return try db.query("SELECT generation FROM share_links WHERE trip_id = ?1", [.text(tripId)]) {
                Int($0.int(0))
            }.first ?? 1
        }
    }
}
