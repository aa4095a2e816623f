public import Foundation
public import EnRouteDomain
import EnRouteModels
import PostgresClient

/// Quotes on PostgreSQL, in `quotes` (migrated by `quote_migrations`) beside the trips, on the trip store's
/// connections.
public final class PostgresQuoteStore: QuoteStore, Sendable {
    /// Schema migrations of the quotes table, applied in order once each.
    static let migrations: [String] = [
        """
        CREATE TABLE quotes (id TEXT PRIMARY KEY, account_id TEXT NOT NULL, expires_at DOUBLE PRECISION NOT NULL, \
        record BYTEA NOT NULL);
        CREATE INDEX quotes_expiry ON quotes(expires_at);
        """
    ]

    private let store: PostgresTripStore

    /// Opens (creating if needed) the quotes table in `tripStore`'s database.
    public init(tripStore: PostgresTripStore, now: @Sendable () -> Date = { Date() }) throws {
        store = tripStore
        try store.migrateCompanion(Self.migrations, table: "quote_migrations", appliedAt: now())
    }

    public func save(_ quotes: [Quote]) async throws {
        let rows: [[PostgresValue]] = try quotes.map {
            [
                .text($0.id), .text($0.accountId), seconds($0.expiresAt),
                .bytea(Array(try WireCoding.encoder().encode($0))),
            ]
        }
        try await store.write { db in
            for row in rows {
                try db.run(
                    """
                    INSERT INTO quotes (id, account_id, expires_at, record) VALUES ($1, $2, $3, $4)
                    ON CONFLICT (id) DO UPDATE SET account_id = EXCLUDED.account_id, expires_at = EXCLUDED.expires_at, \
                    record = EXCLUDED.record
                    """, row)
            }
        }
    }

    public func quote(id: String) async throws -> Quote? {
        try await store.perform { db in
            try db.query("SELECT record FROM quotes WHERE id = $1", [.text(id)]).first.map {
                try WireCoding.decoder().decode(Quote.self, from: Data($0.bytes(0)))
            }
        }
    }

    public func purge(expiredBefore cutoff: Date) async throws {
        try await store.perform { db in try db.run("DELETE FROM quotes WHERE expires_at < $1", [seconds(cutoff)]) }
    }
}
