public import Foundation
public import EnRouteModels

/// Receipts, read from the trip's final price and its ledger rows.
public enum Receipts {
    /// The receipt of `trip` once its payment settled; nil before (the hold is still open or being placed).
    ///
    /// The lines are the final price's (base, distance, time, wait, demand, fees, adjustments with their reasons, a
    /// cancellation fee) and the tip; the total is what the ledger says the customer paid or owes for the trip.
    public static func receipt(
        _ trip: TripRecord, changes: [ChangeLogEntry], ledger: [LedgerEntry], path: [Coordinate]
    ) -> Receipt? {
        guard let payment = trip.payment, PaymentMachine.isSettled(payment.state), payment.state != .failed else {
            return nil
        }
        let c = payment.currency
        var lines = trip.finalPrice?.lines ?? []
        if let tip = trip.tip, tip.state == .charged {
            lines.append(PriceLine(kind: "tip", label: "Tip", amount: tip.amount))
        }
        // What left the card or is owed for this trip: captures, charges, debts and the tip.
        let paid =
            ledger.filter {
                ["capture", "fee", "charge", "debt"].contains($0.kind) && $0.account == Ledger.trip(trip.id)
            }
            .reduce(0) { $0 + $1.amountMinor }
            + ledger.filter { $0.kind == "tip" && $0.amountMinor > 0 }.reduce(0) { $0 + $1.amountMinor }
        let timeline = TripTimeline(trip: trip, changes: changes)
        return Receipt(
            tripId: trip.id, kind: trip.kind.rawValue, payment: payment.state, lines: lines,
            total: Money(amountMinor: paid, currency: c),
            card: payment.card, requestedAt: timeline.requestedAt, startedAt: timeline.startedAt,
            endedAt: timeline.endedAt,
            route: path.count > 1 ? Polyline.encode(path, precision: 6) : nil)
    }

    /// The provider's earnings and tips in `from..<to`, from the provider's ledger rows.
    public static func earnings(_ rows: [LedgerEntry], from: Date, to: Date, currency: String) -> ProviderEarnings {
        let lines = rows.map {
            ProviderEarnings.Line(
                tripId: $0.tripId ?? "", kind: $0.kind,
                amount: Money(amountMinor: $0.amountMinor, currency: $0.currency), at: $0.at)
        }
        return ProviderEarnings(
            from: from, to: to, total: Money(amountMinor: rows.reduce(0) { $0 + $1.amountMinor }, currency: currency),
            lines: lines)
    }
}
