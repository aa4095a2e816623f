public import Foundation
public import EnRouteDomain
import EnRouteModels
import SQLiteClient
import Synchronization

/// The ledger, payment attempts and rating totals, read outside any transaction.
extension SQLiteTripStore {
    public func ledger(tripId: String) throws -> [LedgerEntry] {
        try reader.withLock { db in
            try db.query(
                "SELECT \(Self.ledgerColumns) FROM ledger WHERE trip_id = ?1 ORDER BY seq", [.text(tripId)],
                Self.ledgerRow)
        }
    }

    public func ledger(account: String, from: Date, to: Date) throws -> [LedgerEntry] {
        try reader.withLock { db in
            try db.query(
                "SELECT \(Self.ledgerColumns) FROM ledger WHERE account = ?1 AND at >= ?2 AND at < ?3 ORDER BY at, seq",
                [.text(account), .real(from.timeIntervalSince1970), .real(to.timeIntervalSince1970)], Self.ledgerRow)
        }
    }

    public func ledgerBalance(account: String) throws -> Int {
        try reader.withLock { db in
            try db.query("SELECT COALESCE(SUM(amount_minor), 0) FROM ledger WHERE account = ?1", [.text(account)]) {
                Int($0.int(0))
            }.first ?? 0
        }
    }

    public func unattachedPaymentAttempts(before cutoff: Date) throws -> [PaymentAttempt] {
        try reader.withLock { db in
            try db.query(
                "SELECT record FROM payment_attempts WHERE trip_id IS NULL AND created_at < ?1 ORDER BY created_at",
                [.real(cutoff.timeIntervalSince1970)]
            ) { try WireCoding.decoder().decode(PaymentAttempt.self, from: Data($0.blob(0))) }
        }
    }

    public func providerRatings() throws -> [String: RatingTotal] {
        try reader.withLock { db in
            Dictionary(
                uniqueKeysWithValues: try db.query("SELECT provider_id, count, sum FROM provider_ratings") { row in
                    (row.text(0) ?? "", RatingTotal(count: Int(row.int(1)), sum: Int(row.int(2))))
                })
        }
    }

    public func paymentAttempt(intentId: String) throws -> PaymentAttempt? {
        try reader.withLock { db in
            try db.query("SELECT record FROM payment_attempts WHERE intent_id = ?1", [.text(intentId)]) {
                try WireCoding.decoder().decode(PaymentAttempt.self, from: Data($0.blob(0)))
            }.first
        }
    }
}
