public import Foundation
public import EnRouteDomain
import EnRouteModels
public import PostgresClient

/// The ledger, payment attempts and rating totals, read outside any transaction.
extension PostgresTripStore {
    public func ledger(tripId: String) throws -> [LedgerEntry] {
        try read { db in
            try db.query("SELECT \(Self.ledgerColumns) FROM ledger WHERE trip_id = $1 ORDER BY seq", [.text(tripId)])
                .map(Self.ledgerRow)
        }
    }

    public func ledger(account: String, from: Date, to: Date) throws -> [LedgerEntry] {
        try read { db in
            try db.query(
                "SELECT \(Self.ledgerColumns) FROM ledger WHERE account = $1 AND at >= $2 AND at < $3 ORDER BY at, seq",
                [.text(account), .double(from.timeIntervalSince1970), .double(to.timeIntervalSince1970)]
            ).map(Self.ledgerRow)
        }
    }

    public func ledgerBalance(account: String) async throws -> Int {
        try await perform { db in
            Int(
                try db.query("SELECT COALESCE(SUM(amount_minor), 0) FROM ledger WHERE account = $1", [.text(account)])
                    .first?.int(0) ?? 0)
        }
    }

    public func unattachedPaymentAttempts(before cutoff: Date) throws -> [PaymentAttempt] {
        try read { db in
            try db.query(
                "SELECT record FROM payment_attempts WHERE trip_id IS NULL AND created_at < $1 ORDER BY created_at",
                [.double(cutoff.timeIntervalSince1970)]
            ).map { try Self.decodeAttempt($0.bytes(0)) }
        }
    }

    public func providerRatings() throws -> [String: RatingTotal] {
        try read { db in
            Dictionary(
                uniqueKeysWithValues: try db.query("SELECT provider_id, count, sum FROM provider_ratings").map { row in
                    (row.text(0) ?? "", RatingTotal(count: Int(row.int(1)), sum: Int(row.int(2))))
                })
        }
    }

    public func paymentAttempt(intentId: String) throws -> PaymentAttempt? {
        try read { db in
            try db.query("SELECT record FROM payment_attempts WHERE intent_id = $1", [.text(intentId)]).first.map {
                try Self.decodeAttempt($0.bytes(0))
            }
        }
    }
}
