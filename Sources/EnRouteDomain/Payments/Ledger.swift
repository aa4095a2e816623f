public import Foundation

/// One row of the ledger: an amount on one account, as part of one movement of money. Append-only and double-entry:
/// the rows of every movement (and so of every trip) sum to zero.
public struct LedgerEntry: Codable, Sendable, Equatable {
    /// The movement the row belongs to (one per hold, capture, release, fee, tip, …), unique with `account`.
    public let movementId: String
    /// `hold`, `release`, `capture`, `charge`, `fee`, `tip`, `debt`, `settlement`, `earning`, `refund`.
    public let kind: String
    /// The trip the money is for; nil only for movements of no trip (none today).
    public let tripId: String?
    /// Whose money: `customer:<id>:card`, `customer:<id>:hold`, `customer:<id>:owed`, `trip:<id>`, `provider:<id>`,
    /// `merchant:<id>`, `platform`.
    public let account: String
    /// Signed minor units: money leaves an account on a negative row and arrives on a positive one.
    public let amountMinor: Int
    public let currency: String
    public let at: Date
    public init(
        movementId: String, kind: String, tripId: String?, account: String, amountMinor: Int, currency: String, at: Date
    ) {
        self.movementId = movementId; self.kind = kind; self.tripId = tripId; self.account = account
        self.amountMinor = amountMinor; self.currency = currency; self.at = at
    }
}

/// The ledger's accounts and its movements, each a balanced set of rows. Pure.
public enum Ledger {
    public static func card(_ customer: String) -> String { "customer:\(customer):card" }
    public static func hold(_ customer: String) -> String { "customer:\(customer):hold" }
    public static func owed(_ customer: String) -> String { "customer:\(customer):owed" }
    public static func trip(_ id: String) -> String { "trip:\(id)" }
    public static func provider(_ id: String) -> String { "provider:\(id)" }
    public static func merchant(_ id: String) -> String { "merchant:\(id)" }
    public static let platform = "platform"

    /// A balanced movement of `amount` from `from` to `to` (nothing for a zero amount).
    public static func move(
        _ kind: String, id: String, trip: String?, from: String, to: String, amount: Int, currency: String, at: Date
    ) -> [LedgerEntry] {
        guard amount != 0 else { return [] }
        return [
            LedgerEntry(
                movementId: id, kind: kind, tripId: trip, account: from, amountMinor: -amount, currency: currency,
                at: at),
            LedgerEntry(
                movementId: id, kind: kind, tripId: trip, account: to, amountMinor: amount, currency: currency, at: at),
        ]
    }

    /// The trip's takings split between the provider and the platform: one balanced movement of three rows.
    public static func earning(
        id: String, trip: String, provider: String?, amount: Int, providerShare: Int, currency: String, at: Date
    ) -> [LedgerEntry] {
        guard amount != 0 else { return [] }
        guard let provider else {
            return move(
                "earning", id: id, trip: trip, from: Ledger.trip(trip), to: platform, amount: amount,
                currency: currency, at: at)
        }
        return [
            LedgerEntry(
                movementId: id, kind: "earning", tripId: trip, account: Ledger.trip(trip), amountMinor: -amount,
                currency: currency, at: at),
            LedgerEntry(
                movementId: id, kind: "earning", tripId: trip, account: Ledger.provider(provider),
                amountMinor: providerShare, currency: currency, at: at),
            LedgerEntry(
                movementId: id, kind: "earning", tripId: trip, account: platform, amountMinor: amount - providerShare,
                currency: currency, at: at),
        ]
    }

    /// The sum of `entries` on `account`.
    public static func balance(_ entries: [LedgerEntry], account: String) -> Int {
        entries.filter { $0.account == account }.reduce(0) { $0 + $1.amountMinor }
    }

    /// Refuses rows whose movements do not each sum to zero (the stores check every posting with it).
    public static func checkBalanced(_ entries: [LedgerEntry]) throws {
        guard isBalanced(entries) else {
            throw LedgerUnbalanced(movements: Array(Set(entries.map(\.movementId))).sorted())
        }
    }

    /// True when every movement in `entries`, and so their whole, sums to zero.
    public static func isBalanced(_ entries: [LedgerEntry]) -> Bool {
        Dictionary(grouping: entries, by: \.movementId).values.allSatisfy { $0.reduce(0) { $0 + $1.amountMinor } == 0 }
    }
}

/// A posting whose movements do not sum to zero: refused, nothing written.
public struct LedgerUnbalanced: Error, CustomStringConvertible {
    public let movements: [String]
    public var description: String { "unbalanced ledger posting: \(movements.joined(separator: ", "))" }
}
