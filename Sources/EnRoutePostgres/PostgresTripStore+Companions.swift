import Foundation
import PostgresClient

extension PostgresTripStore {
    /// Applies a companion store's `migrations` once each (recorded in `table`) in this store's schema.
    func migrateCompanion(_ migrations: [String], table: String, appliedAt: Date) throws {
        try read { try $0.migrate(migrations, table: table, appliedAt: appliedAt) }
    }

    /// Runs `work` as one transaction that first takes the transaction-scoped advisory lock of `key`, so writers of the
    /// same key (an account's payment methods, a trip's chat) take turns on a rule they check by reading first.
    @discardableResult
    func write<T: Sendable>(
        locking key: String, _ work: @escaping @Sendable (PostgresConnection) throws -> T
    ) async throws -> T {
        try await write { db in
            _ = try db.query("SELECT pg_advisory_xact_lock(hashtext($1))", [.text(key)])
            return try work(db)
        }
    }

    /// Runs `work` on a pooled connection off the cooperative pool, outside a transaction (single statements).
    @discardableResult
    func perform<T: Sendable>(_ work: @escaping @Sendable (PostgresConnection) throws -> T) async throws -> T {
        do { return try await pool.withConnection(work) } catch { throw Self.mapped(error) }
    }
}

/// Seconds since 1970 as stored, or NULL.
func seconds(_ date: Date?) -> PostgresValue { date.map { .double($0.timeIntervalSince1970) } ?? .null }

/// A stored time column, or nil when NULL.
func date(_ row: PostgresRow, _ column: Int) -> Date? {
    row.isNull(column) ? nil : Date(timeIntervalSince1970: row.double(column))
}
