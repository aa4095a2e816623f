public import Foundation
public import EnRouteDomain
import PostgresClient

/// Saved payment methods on PostgreSQL (`payment_methods`, migrated by `payment_method_migrations`), on the trip
/// store's
/// connections. Each change is one transaction holding the account's advisory lock, so an account's rules (one default,
/// a token once, the limit) hold under concurrent requests; the unique indexes back them.
public final class PostgresPaymentMethodStore: PaymentMethodStore, Sendable {
    /// Schema migrations of the payment methods table, applied in order once each.
    static let migrations: [String] = [
        """
        CREATE TABLE payment_methods (
            seq BIGSERIAL PRIMARY KEY,
            id TEXT NOT NULL UNIQUE, account_id TEXT NOT NULL, token TEXT NOT NULL,
            brand TEXT NOT NULL, last4 TEXT NOT NULL, exp_month INTEGER NOT NULL, exp_year INTEGER NOT NULL,
            is_default BOOLEAN NOT NULL, created_at DOUBLE PRECISION NOT NULL,
            UNIQUE (account_id, token));
        CREATE UNIQUE INDEX payment_methods_one_default ON payment_methods(account_id) WHERE is_default;
        """
    ]

    private static let columns = "id, account_id, token, brand, last4, exp_month, exp_year, is_default, created_at"

    private let store: PostgresTripStore

    /// Opens (creating if needed) the payment methods table in `tripStore`'s database.
    public init(tripStore: PostgresTripStore, now: @Sendable () -> Date = { Date() }) throws {
        store = tripStore
        try store.migrateCompanion(Self.migrations, table: "payment_method_migrations", appliedAt: now())
    }

    /// The payment methods schema version now in force.
    public var schemaVersion: Int { Self.migrations.count }

    public func add(_ method: StoredPaymentMethod, limit: Int) async throws -> PaymentMethodAddition {
        try await store.write(locking: "payment_methods:" + method.accountId) { db in
            let mine = try Self.methods(db, "account_id = $1", [.text(method.accountId)])
            if let existing = mine.first(where: { $0.token == method.token }) { return .existing(existing) }
            guard mine.count < limit else { return .full }
            var method = method
            method.isDefault = method.isDefault || mine.isEmpty
            if method.isDefault {
                try db.run(
                    "UPDATE payment_methods SET is_default = false WHERE account_id = $1", [.text(method.accountId)])
            }
            try db.run(
                "INSERT INTO payment_methods (\(Self.columns)) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
                [
                    .text(method.id), .text(method.accountId), .text(method.token), .text(method.card.brand),
                    .text(method.card.last4),
                    .int(method.card.expMonth), .int(method.card.expYear), .bool(method.isDefault),
                    seconds(method.createdAt),
                ])
            return .added(method)
        }
    }

    public func list(accountId: String) async throws -> [StoredPaymentMethod] {
        try await store.perform { db in try Self.methods(db, "account_id = $1", [.text(accountId)]) }
    }

    public func remove(id: String, accountId: String) async throws -> Bool {
        try await store.write(locking: "payment_methods:" + accountId) { db in
            guard
                let removed = try Self.methods(db, "id = $1 AND account_id = $2", [.text(id), .text(accountId)]).first
            else { return false }
            try db.run("DELETE FROM payment_methods WHERE id = $1", [.text(id)])
            if removed.isDefault {
                try db.run(
                    """
                    UPDATE payment_methods SET is_default = true
                    WHERE seq = (SELECT MAX(seq) FROM payment_methods WHERE account_id = $1)
                    """, [.text(accountId)])
            }
            return true
        }
    }

    public func setDefault(id: String, accountId: String) async throws -> StoredPaymentMethod? {
        try await store.write(locking: "payment_methods:" + accountId) { db in
            guard var method = try Self.methods(db, "id = $1 AND account_id = $2", [.text(id), .text(accountId)]).first
            else { return nil }
            try db.run(
                "UPDATE payment_methods SET is_default = false WHERE account_id = $1 AND is_default", [.text(accountId)]
            )
            try db.run("UPDATE payment_methods SET is_default = true WHERE id = $1", [.text(id)])
            method.isDefault = true
            return method
        }
    }

    public func defaultMethod(for accountId: String) async throws -> StoredPaymentMethod? {
        try await store.perform { db in try Self.methods(db, "account_id = $1 AND is_default", [.text(accountId)]).first
        }
    }

    /// The methods matching `condition`, oldest first.
    private static func methods(
        _ db: PostgresConnection, _ condition: String, _ values: [PostgresValue]
    ) throws -> [StoredPaymentMethod] {
        try db.query("SELECT \(columns) FROM payment_methods WHERE \(condition) ORDER BY seq", values).map { row in
            StoredPaymentMethod(
                id: row.text(0) ?? "", accountId: row.text(1) ?? "", token: row.text(2) ?? "",
                card: CardDetails(
                    brand: row.text(3) ?? "", last4: row.text(4) ?? "", expMonth: Int(row.int(5)),
                    expYear: Int(row.int(6))),
                isDefault: row.bool(7), createdAt: Date(timeIntervalSince1970: row.double(8)))
        }
    }
}
