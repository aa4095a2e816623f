public import Foundation
public import EnRouteDomain
import EnRouteModels
import SQLiteKit
import Synchronization

/// Quotes on SQLite, in a table of their own (`quotes`, migrated by `quote_migrations`) in the trip database, written
/// through the trip store's writer.
public final class SQLiteQuoteStore: QuoteStore, @unchecked Sendable {
    /// Schema migrations of the quotes table, applied in order once each.
    static let migrations: [String] = [
        """
        CREATE TABLE quotes (
            id TEXT PRIMARY KEY, account_id TEXT NOT NULL, expires_at REAL NOT NULL, record BLOB NOT NULL);
        CREATE INDEX quotes_expiry ON quotes(expires_at);
        """,
    ]

    private let writer: SQLiteWriter
    private let reader: Mutex<SQLiteDatabase>

    /// Opens (creating if needed) the quotes table in `tripStore`'s database.
    public init(tripStore: SQLiteTripStore, now: @Sendable () -> Date = { Date() }) throws {
        writer = tripStore.writer
        reader = try tripStore.companionReader(migrations: Self.migrations, table: "quote_migrations", appliedAt: now())
    }

    public func save(_ quotes: [Quote]) async throws {
        let rows = try quotes.map { ($0, Array(try WireCoding.encoder().encode($0))) }
        try await writer.transaction { db in
            for (quote, record) in rows {
                try db.run("INSERT OR REPLACE INTO quotes (id, account_id, expires_at, record) VALUES (?1, ?2, ?3, ?4)",
                           [.text(quote.id), .text(quote.accountId), .real(quote.expiresAt.timeIntervalSince1970), .blob(record)])
            }
        }
    }

    public func quote(id: String) throws -> Quote? {
        // Decoded after the connection is released: a quote carries its whole price list, and every request reads here.
        let record = try reader.withLock { db in try db.query("SELECT record FROM quotes WHERE id = ?1", [.text(id)]) { $0.blob(0) }.first }
        return try record.map { try WireCoding.decoder().decode(Quote.self, from: Data($0)) }
    }

    public func purge(expiredBefore cutoff: Date) async throws {
        try await writer.transaction { db in try db.run("DELETE FROM quotes WHERE expires_at < ?1", [.real(cutoff.timeIntervalSince1970)]) }
    }
}
