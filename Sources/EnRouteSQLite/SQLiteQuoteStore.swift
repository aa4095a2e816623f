public import Foundation
public import EnRouteDomain
import EnRouteModels
import SQLiteClient
import Synchronization

/// Quotes on SQLite, in a table of their own (`quotes`, migrated by `quote_migrations`) in the trip database, written
/// through the trip store's writer.
///
/// A quote's price list is stored once in `price_lists` and named by the quote's row, not written into every quote
/// (every confirm reads its quote, and the price list was most of the reading); rows from before carry it themselves.
public final class SQLiteQuoteStore: QuoteStore, @unchecked Sendable {
    /// Schema migrations of the quotes table, applied in order once each.
    static let migrations: [String] = [
        """
        CREATE TABLE quotes (
            id TEXT PRIMARY KEY, account_id TEXT NOT NULL, expires_at REAL NOT NULL, record BLOB NOT NULL);
        CREATE INDEX quotes_expiry ON quotes(expires_at);
        """,
        """
        CREATE TABLE price_lists (id INTEGER PRIMARY KEY, rules BLOB NOT NULL UNIQUE);
        ALTER TABLE quotes ADD COLUMN price_list INTEGER REFERENCES price_lists(id);
        """,
    ]

    private let writer: SQLiteWriter
    private let reader: Mutex<SQLiteDatabase>
    /// Price lists by their row, as read or written; and the last one written, so that quotes priced on the same list
    /// (nearly all) name it without encoding it again.
    private struct PriceLists {
        var byRow: [Int64: PricingRules] = [:]
        var last: (rules: PricingRules, row: Int64)?
    }
    private let priceLists = Mutex(PriceLists())

    /// Opens (creating if needed) the quotes table in `tripStore`'s database.
    public init(tripStore: SQLiteTripStore, now: @Sendable () -> Date = { Date() }) throws {
        writer = tripStore.writer
        reader = try tripStore.companionReader(migrations: Self.migrations, table: "quote_migrations", appliedAt: now())
    }

    public func save(_ quotes: [Quote]) async throws {
        let encoder = WireCoding.encoder()
        encoder.userInfo[Quote.priceListApart] = true
        let rows = try quotes.map { ($0, Array(try encoder.encode($0))) }
        let last = priceLists.withLock { $0.last }
        // A price list not written before is encoded once and inserted (or found) in the same transaction as its
        // quotes.
        let written: [(rules: PricingRules, row: Int64)] = try await writer.transaction { db in
            var lists: [(rules: PricingRules, row: Int64)] = last.map { [$0] } ?? []
            for (quote, record) in rows {
                let row: Int64
                if let known = lists.first(where: { $0.rules == quote.rules }) {
                    row = known.row
                } else {
                    row = try Self.priceListRow(quote.rules, in: db)
                    lists.append((quote.rules, row))
                }
                try db.run(
                    "INSERT OR REPLACE INTO quotes (id, account_id, expires_at, record, price_list) VALUES (?1, ?2, "
                        + "?3, ?4, ?5)",
                    [
                        .text(quote.id), .text(quote.accountId), .real(quote.expiresAt.timeIntervalSince1970),
                        .blob(record), .integer(row),
                    ])
            }
            return lists
        }
        // Only once committed: a row from a transaction rolled back would name nothing.
        priceLists.withLock { p in
            for list in written { p.byRow[list.row] = list.rules }
            if let newest = written.last { p.last = newest }
        }
    }

    /// The row of `rules` in `price_lists`, inserted when new.
    private static func priceListRow(_ rules: PricingRules, in db: SQLiteDatabase) throws -> Int64 {
        let encoded = Array(try WireCoding.encoder().encode(rules))
        try db.run("INSERT INTO price_lists (rules) VALUES (?1) ON CONFLICT(rules) DO NOTHING", [.blob(encoded)])
        guard
            let row = try db.query("SELECT id FROM price_lists WHERE rules = ?1", [.blob(encoded)], { $0.int(0) }).first
        else {
            throw SQLiteError(code: 1, message: "the price list just written is not there")
        }
        return row
    }

    public func quote(id: String) throws -> Quote? {
        // Decoded after the connection is released; the price list is read from the database only the first time.
        let found = try reader.withLock { db in
            try db.query("SELECT record, price_list FROM quotes WHERE id = ?1", [.text(id)]) {
                ($0.blob(0), $0.isNull(1) ? nil : $0.int(1))
            }.first
        }
        guard let (record, row) = found else { return nil }
        let decoder = WireCoding.decoder()
        if let row { decoder.userInfo[Quote.priceListApart] = try priceList(row: row) }
        return try decoder.decode(Quote.self, from: Data(record))
    }

    /// The price list at `row`, from memory or else from the database.
    private func priceList(row: Int64) throws -> PricingRules {
        if let known = priceLists.withLock({ $0.byRow[row] }) { return known }
        guard
            let encoded = try reader.withLock({ db in
                try db.query("SELECT rules FROM price_lists WHERE id = ?1", [.integer(row)]) { $0.blob(0) }.first
            })
        else {
            throw SQLiteError(code: 1, message: "a quote names price list \(row), which is not stored")
        }
        let rules = try WireCoding.decoder().decode(PricingRules.self, from: Data(encoded))
        priceLists.withLock { $0.byRow[row] = rules }
        return rules
    }

    public func purge(expiredBefore cutoff: Date) async throws {
        try await writer.transaction { db in
            try db.run("DELETE FROM quotes WHERE expires_at < ?1", [.real(cutoff.timeIntervalSince1970)])
        }
    }
}
