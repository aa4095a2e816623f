public import Foundation
public import EnRouteModels

/// Settles each trip's money after it ends: the final price (or the cancellation fee) captured out of the hold and the
/// rest released, a price above the hold charged off-session, a refusal there kept as a debt; gateway callbacks and the
/// reconciler's passes; receipts.
public final class TripSettlement: Sendable {
    public let payments: TripPayments
    let commits: TripCommits
    let holds: PaymentHolds

    init(payments: TripPayments, commits: TripCommits, holds: PaymentHolds) {
        self.payments = payments; self.commits = commits; self.holds = holds
    }

    /// `settlement`, or the refusal a server that takes no payments gives.
    static func required(_ settlement: TripSettlement?) throws(TripError) -> TripSettlement {
        guard let settlement else { throw TripError.forbidden("This server takes no payments.") }
        return settlement
    }

    /// What settling a trip did; `retryLater` when a measurement was not ready.
    public enum Settlement: Sendable, Equatable { case done, nothingToDo, retryLater }

    /// What an ended trip costs: the amount to take, the final price, and the fee's line when a cancellation is
    /// charged.
    struct Charge {
        var take = 0
        var price: PriceBreakdown?
        var fee: PriceLine?
    }

    /// Captures the final price (or the cancellation fee) out of the ended trip's hold and releases the rest; a final
    /// price above the hold charges the difference off-session, and a refusal there becomes a debt. Every gateway call
    /// carries a key derived from the trip and the operation, so running this again never moves money twice.
    @discardableResult
    public func settlePayment(
        of tripId: String, measurement: (any TripMeasurement)?, final: Bool = false
    ) async throws -> Settlement {
        guard let trip = try commits.store.trip(id: tripId), !trip.status.isActive, let payment = trip.payment,
            payment.state == .held,
            let intent = payment.intentId
        else { return .nothingToDo }
        let timeline = TripTimeline(trip: trip, changes: try commits.store.changes(tripId: tripId))
        let at = commits.now()
        guard let charge = try await charge(trip, payment, timeline, measurement: measurement, final: final, at: at)
        else { return .retryLater }
        let (events, moved, collected) = try await collect(charge, of: trip, payment, intent: intent, at: at)
        let rows = moved + earnings(of: trip, collected: collected, charge: charge, currency: payment.currency, at: at)
        let c = payment.currency
        let finalPrice: PriceBreakdown? = charge.price ?? charge.fee.map { PriceBreakdown(lines: [$0], currency: c) }
        try await changePayment(of: tripId, expecting: payment.version, events: events, ledger: rows) { trip in
            trip.finalPrice = finalPrice
            trip.fare = finalPrice?.total ?? Money(amountMinor: 0, currency: c)
        }
        return .done
    }

    /// What the ended trip costs; nil when its measured distance is still being made.
    private func charge(
        _ trip: TripRecord, _ payment: TripPayment, _ timeline: TripTimeline, measurement: (any TripMeasurement)?,
        final: Bool, at: Date
    ) async throws -> Charge? {
        let rules = payments.rules
        switch trip.status {
        case .ride(.completed), .delivery(.delivered):
            let quoted = trip.quotedPrice ?? PriceBreakdown(lines: [], currency: payment.currency)
            guard trip.kind == .ride else {
                let price = Pricing.finalBasket(quote: quoted, changes: trip.basketChanges ?? [], rules: rules)
                return Charge(take: price.total.amountMinor, price: price)
            }
            let wait =
                timeline.startedAt.flatMap { start in timeline.arrivedAt.map { start.timeIntervalSince($0) } } ?? 0
            let changed = !QuoteBook.same(trip.dropoff, await payments.quotes.quoteDropoff(trip) ?? trip.dropoff)
            let free = TimeInterval((rules.products[trip.productID ?? ""]?.freeWaitMinutes ?? 0) * 60)
            var measured = (distanceMeters: 0.0, durationSeconds: 0.0)
            if changed || wait > free {
                switch await measurement?.measured(trip, final: final) ?? .none {
                case .value(let d, let t): measured = (d, t)
                case .pending: return nil
                case .none:
                    if let id = trip.quoteId, let quote = try? await payments.quotes.store.quote(id: id) {
                        measured = (quote.distanceMeters, quote.durationSeconds)
                    }
                }
            }
            let price = Pricing.finalRide(
                quote: quoted, product: trip.productID ?? "", demand: trip.demand ?? 1,
                outcome: .init(
                    destinationChanged: changed, waitSeconds: wait, distanceMeters: measured.distanceMeters,
                    durationSeconds: measured.durationSeconds), rules: rules)
            return Charge(take: price.total.amountMinor, price: price)
        case .ride(.cancelled), .delivery(.cancelled):
            return await cancellationCharge(trip, payment, timeline, measurement: measurement, at: at)
        default:
            return Charge()
        }
    }

    /// The fee of a cancellation by the customer after the provider set off, or of a customer who did not show.
    private func cancellationCharge(
        _ trip: TripRecord, _ payment: TripPayment, _ timeline: TripTimeline, measurement: (any TripMeasurement)?,
        at: Date
    ) async -> Charge {
        let byCustomer = trip.cancellation?.by == .customer
        let noShow = trip.cancellation?.by == .provider && timeline.arrivedAt != nil
        guard byCustomer || noShow, let assigned = timeline.assignedAt else { return Charge() }
        let progressed =
            timeline.arrivedAt != nil ? true : await measurement?.providerProgressed(trip, since: assigned) ?? false
        guard
            let fee = Pricing.cancellationFee(
                assignedAt: assigned, arrivedAt: timeline.arrivedAt, cancelledAt: timeline.endedAt ?? at,
                providerProgressed: progressed, rules: payments.rules)
        else { return Charge() }
        let take = min(fee.amountMinor, payment.heldMinor)
        let line = PriceLine(
            kind: "cancellationFee", label: "Cancellation fee",
            amount: Money(amountMinor: take, currency: fee.currency),
            reason: noShow ? "No-show: the provider waited at pickup" : "Cancelled after the provider was on the way")
        return Charge(take: take, fee: line)
    }

    /// Moves the money at the gateway (idempotent keys) and returns the machine's events, the ledger's rows and what
    /// was collected: the hold captured up to the charge and released beyond it, anything above it charged or owed.
    private func collect(
        _ charge: Charge, of trip: TripRecord, _ payment: TripPayment, intent: String, at: Date
    ) async throws -> (events: [PaymentEvent], rows: [LedgerEntry], collected: Int) {
        let gateway = payments.gateway, tripId = trip.id, customer = trip.customerId, c = payment.currency
        var events: [PaymentEvent] = []
        var rows: [LedgerEntry] = []
        let captured = min(charge.take, payment.heldMinor)
        if captured > 0 {
            _ = try await gateway.capture(intentId: intent, amountMinor: captured, idempotencyKey: "capture:\(tripId)")
            events.append(.captured(amountMinor: captured))
            rows += Ledger.move(
                charge.fee == nil ? "capture" : "fee", id: "capture:\(tripId)", trip: tripId,
                from: Ledger.hold(customer), to: Ledger.trip(tripId), amount: captured, currency: c, at: at)
        } else {
            _ = try await gateway.cancel(intentId: intent, idempotencyKey: "release:\(tripId)")
            events.append(.released)
        }
        rows += Ledger.move(
            "release", id: "release:\(tripId)", trip: tripId, from: Ledger.hold(customer), to: Ledger.card(customer),
            amount: payment.heldMinor - captured, currency: c, at: at)
        guard charge.take > payment.heldMinor else { return (events, rows, captured) }
        let extra = charge.take - payment.heldMinor
        do {
            _ = try await gateway.charge(
                AuthorizationRequest(
                    amountMinor: extra, currency: c, paymentMethod: payment.token ?? "",
                    idempotencyKey: "charge:\(tripId)", description: "EnRoute trip \(tripId), above the hold"))
            events.append(.charged(amountMinor: extra))
            rows += Ledger.move(
                "charge", id: "charge:\(tripId)", trip: tripId, from: Ledger.card(customer), to: Ledger.trip(tripId),
                amount: extra, currency: c, at: at)
        } catch {
            guard let decline = PaymentHolds.refusal(error) else { throw error }
            events.append(.chargeFailed(amountMinor: extra, decline))
            rows += Ledger.move(
                "debt", id: "debt:\(tripId)", trip: tripId, from: Ledger.owed(customer), to: Ledger.trip(tripId),
                amount: extra, currency: c, at: at)
        }
        return (events, rows, charge.take)
    }

    /// Who earns what was collected: a basket's goods are the merchant's; the provider's share is of the rest (the
    /// fare, or the delivery's fees).
    private func earnings(
        of trip: TripRecord, collected: Int, charge: Charge, currency c: String, at: Date
    ) -> [LedgerEntry] {
        let tripId = trip.id
        let basket = (charge.price?.lines ?? []).filter { $0.kind == "item" || $0.kind == "adjustment" }
        let goods =
            trip.kind == .delivery && charge.fee == nil
            ? min(collected, max(0, basket.reduce(0) { $0 + $1.amount.amountMinor })) : 0
        var rows: [LedgerEntry] = []
        if let merchant = trip.merchantId {
            rows += Ledger.move(
                "earning", id: "goods:\(tripId)", trip: tripId, from: Ledger.trip(tripId),
                to: Ledger.merchant(merchant), amount: goods, currency: c, at: at)
        }
        rows += Ledger.earning(
            id: "earning:\(tripId)", trip: tripId, provider: trip.providerId, amount: collected - goods,
            providerShare: Pricing.providerShare(of: collected - goods, rules: payments.rules), currency: c, at: at)
        return rows
    }

    /// Applies `events` to the trip's payment in one transaction with `ledger`'s rows and `edit`: a new trip version
    /// the parties see, logged as the backend's change.
    func changePayment(
        of tripId: String, expecting paymentVersion: Int?, events: [PaymentEvent], ledger: [LedgerEntry],
        edit: @escaping @Sendable (inout TripRecord) -> Void = { _ in }
    ) async throws {
        let at = commits.now()
        let result: (old: TripRecord, new: TripRecord)? = try await commits.transaction { tx in
            guard let old = try await tx.trip(tripId), var payment = old.payment else { return nil }
            if let paymentVersion, payment.version != paymentVersion { return nil }
            for event in events {
                guard case .success(let next) = PaymentMachine.apply(event, to: payment) else { return nil }
                payment = next
            }
            var new = old
            new.payment = payment
            edit(&new)
            new.version = old.version + 1
            new.updatedAt = at
            try await tx.update(new, expectedVersion: old.version)
            try await tx.append(
                ChangeLogEntry(
                    tripId: tripId, version: new.version, status: new.status.name, actorRole: .backend,
                    actorId: "payments", serverTime: at))
            try await tx.post(ledger)
            return (old, new)
        }
        if let result { commits.commit(result.new, previous: result.old) }
    }

    /// Pays what the customer owes, trip by trip, on the default card (the customer is present); a refusal is a 402.
    public func settleBalance(by account: Account, key: String) async throws -> AccountBalance {
        guard account.role == .customer else { throw TripError.forbidden("Only customers have a balance.") }
        let debts = try payments.debts(of: account.id)
        guard !debts.isEmpty else { return try payments.balance(of: account.id) }
        guard let card = try await payments.defaultCard(account.id) else {
            throw TripError.payment(TripPayments.methodRequired)
        }
        for (tripId, amount) in debts {
            let at = commits.now()
            do {
                _ = try await payments.gateway.charge(
                    AuthorizationRequest(
                        amountMinor: amount, currency: payments.rules.currency, paymentMethod: card.token,
                        idempotencyKey: "settle:\(tripId):\(key)", description: "EnRoute balance, trip \(tripId)"))
            } catch {
                if case .declined(let decline) = try PaymentHolds.event(for: error, log: payments.log) {
                    throw TripError.payment(TripPayments.declined(decline))
                }
                throw error
            }
            let rows = Ledger.move(
                "settlement", id: "settle:\(tripId):\(key)", trip: tripId, from: Ledger.card(account.id),
                to: Ledger.owed(account.id), amount: amount, currency: payments.rules.currency, at: at)
            try await changePayment(of: tripId, expecting: nil, events: [.settled(amountMinor: amount)], ledger: rows)
        }
        return try payments.balance(of: account.id)
    }
}

extension QuoteBook {
    /// The drop-off the trip's quote priced, to tell whether the destination changed.
    func quoteDropoff(_ trip: TripRecord) async -> Coordinate? {
        guard let id = trip.quoteId else { return nil }
        return (try? await store.quote(id: id))?.dropoff
    }
}
