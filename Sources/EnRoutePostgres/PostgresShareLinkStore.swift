public import Foundation
public import EnRouteDomain
import PostgresClient

/// Share-link revocations on PostgreSQL: one row per trip whose links were revoked (`share_links`, migrated by
/// `share_link_migrations`), on the trip store's connections.
public final class PostgresShareLinkStore: ShareLinkStore, Sendable {
    /// Schema migrations of the revocation table, applied in order once each.
    static let migrations: [String] = [
        "CREATE TABLE share_links (trip_id TEXT PRIMARY KEY, generation INTEGER NOT NULL, revoked_at DOUBLE "
            + "PRECISION NOT NULL);"
    ]

    private let store: PostgresTripStore
    private let now: @Sendable () -> Date

    /// Opens (creating if needed) the revocation table in `tripStore`'s database.
    public init(tripStore: PostgresTripStore, now: @escaping @Sendable () -> Date) throws {
        store = tripStore
        self.now = now
        try store.migrateCompanion(Self.migrations, table: "share_link_migrations", appliedAt: now())
    }

    public func generation(tripId: String) throws -> Int {
        try store.read { db in
            Int(
                try db.query("SELECT generation FROM share_links WHERE trip_id = $1", [.text(tripId)]).first?.int(0)
                    ?? 0)
        }
    }

    public func revoke(tripId: String) async throws -> Int {
        let at = seconds(now())
        return try await store.perform { db in
            Int(
                try db.query(
                    """
                    INSERT INTO share_links (trip_id, generation, revoked_at) VALUES ($1, 1, $2)
                    ON CONFLICT (trip_id) DO UPDATE SET generation = share_links.generation + 1, revoked_at = \
                    EXCLUDED.revoked_at
                    RETURNING generation
                    """, [.text(tripId), at]
                ).first?.int(0) ?? 1)
        }
    }
}
