public import Foundation
public import EnRouteModels

extension TripLifecycle {
    /// The merchant marks basket lines missing or replaced before the order is ready; the final price follows them.
    public func changeBasket(
        _ orderId: String, changes: [BasketItemChange], by account: Account, idempotency: IdempotencyContext?
    ) async throws -> TripRecord {
        guard account.role == .merchant else { throw TripError.forbidden("Only the merchant changes a basket.") }
        guard !changes.isEmpty, changes.count <= 99 else {
            throw TripError.invalid(pointer: "/changes", detail: "must list 1 to 99 changes")
        }
        let currency = holds?.payments.rules.currency ?? "EUR"
        var parsed: [Pricing.BasketChange] = []
        for (i, change) in changes.enumerated() {
            guard let kind = Pricing.BasketChange.Kind(rawValue: change.kind) else {
                throw TripError.invalid(pointer: "/changes/\(i)/kind", detail: "must be missing or replaced")
            }
            if let q = change.quantity, !(1...99).contains(q) {
                throw TripError.invalid(pointer: "/changes/\(i)/quantity", detail: "must be from 1 to 99")
            }
            if kind == .replaced {
                guard let name = change.replacementName, !name.trimmingCharacters(in: .whitespaces).isEmpty,
                    name.count <= 200
                else {
                    throw TripError.invalid(
                        pointer: "/changes/\(i)/replacementName",
                        detail: "must name what was packed instead (1 to 200 characters)")
                }
                guard let unit = change.replacementUnitMinor, (0...100_000_000).contains(unit) else {
                    throw TripError.invalid(
                        pointer: "/changes/\(i)/replacementUnitMinor",
                        detail: "must be the substitute's unit price in minor units")
                }
                parsed.append(
                    Pricing.BasketChange(
                        sku: change.sku, kind: kind, replacementName: name,
                        replacementUnit: Money(amountMinor: unit, currency: currency)))
            } else {
                parsed.append(Pricing.BasketChange(sku: change.sku, kind: kind, quantity: change.quantity))
            }
        }
        let basket = parsed
        return try await commits.recordChange(orderId, by: account, idempotency: idempotency, kind: .delivery) {
            trip, _ in
            if let i = basket.firstIndex(where: { change in !(trip.items ?? []).contains { $0.sku == change.sku } }) {
                return .failure(.invalid(pointer: "/changes/\(i)/sku", detail: "is not in this order's basket"))
            }
            if !(trip.status == .delivery(.placed) || trip.status == .delivery(.picking)) || trip.merchantStep == .ready
            {
                return .failure(.refused(MoveRefusal("The basket can change only before the order is ready."), trip))
            }
            var next = trip
            // A later change of the same line replaces the earlier one.
            next.basketChanges =
                (trip.basketChanges ?? []).filter { old in !basket.contains { $0.sku == old.sku } } + basket
            return .success(next)
        }
    }
}
