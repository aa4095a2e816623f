public import Foundation
public import EnRouteModels

extension TripRecord {
    /// The record's price and payment from the quote it was confirmed on and the hold placed for it.
    mutating func apply(_ priced: Quote, payment: TripPayment) {
        quoteId = priced.id
        quote = priced.price.total
        quotedPrice = priced.price
        demand = priced.demand
        self.payment = payment
    }
}

/// What happened on a trip, read from its change log: when each step was applied.
public struct TripTimeline: Sendable, Equatable {
    public var requestedAt: Date
    public var assignedAt: Date?
    public var arrivedAt: Date?
    public var startedAt: Date?
    public var endedAt: Date?

    /// The timeline of `trip` from its change log (`changes`, oldest first).
    public init(trip: TripRecord, changes: [ChangeLogEntry]) {
        requestedAt = trip.createdAt
        for change in changes {
            switch change.status {
            case TripState.driverAssigned.rawValue where assignedAt == nil: assignedAt = change.serverTime
            case TripState.driverArrived.rawValue: arrivedAt = change.serverTime
            case TripState.onTrip.rawValue, DeliveryStatus.onTheWay.rawValue:
                if startedAt == nil { startedAt = change.serverTime }
            case TripState.completed.rawValue, TripState.cancelled.rawValue, TripState.noDriversFound.rawValue,
                DeliveryStatus.delivered.rawValue:
                // The first entry in a final state is the end; later ones (tips, ratings, payments) keep that status.
                if endedAt == nil { endedAt = change.serverTime }
            default: break
            }
            // A courier takes a delivery without a status of its own: the first step a provider made.
            if trip.kind == .delivery, assignedAt == nil, change.actorRole == .provider {
                assignedAt = change.serverTime
            }
        }
    }
}

/// A trip's measured distance and time, or why there is none.
public enum TripMeasured: Sendable, Equatable {
    case value(distanceMeters: Double, durationSeconds: Double)
    /// Still being made (the path is being matched onto the roads): try again shortly.
    case pending
    /// Too few fixes to measure: the quote's route stands in.
    case none
}

/// How the final price is measured, given by the composition root (roads, the stored path).
public protocol TripMeasurement: Sendable {
    /// The distance and time driven on the trip: the map-matched path when there are roads, the stored path otherwise.
    /// `final` is the settlement's last try: a measurement still being made is not waited for any longer.
    func measured(_ trip: TripRecord, final: Bool) async -> TripMeasured
    /// Whether the provider was on the way to the pickup after `assignedAt` (for the cancellation fee).
    func providerProgressed(_ trip: TripRecord, since assignedAt: Date) async -> Bool
}

extension TripService {
    private var money: TripPayments {
        get throws(TripError) {
            guard let payments else { throw TripError.forbidden("This server takes no payments.") }
            return payments
        }
    }

    // MARK: - The hold at confirmation

    /// Holds the quote's total on the customer's default card, or reuses the hold this quote placed already (after a
    /// bank challenge, or a request that died after the hold); a refusal or a challenge is answered as 402 and stored
    /// under the request's key.
    func holdPayment(
        for quote: Quote, by account: Account, idempotency: IdempotencyContext?
    ) async throws -> PaymentAttempt {
        let payments = try money
        let gateway = payments.gateway
        let at = now()
        let card = try await payments.defaultCard(account.id)
        enum Step: Sendable { case use(PaymentAttempt), ask(PaymentAttempt), recheck(PaymentAttempt) }
        let step: Step = try await transaction { tx in
            let previous = try await tx.paymentAttempt(quoteId: quote.id)
            if let existing = previous {
                if let trip = existing.tripId {
                    throw TripError.invalid(
                        pointer: "/quoteId", detail: "was used for trip \(trip) already; ask for a new quote")
                }
                switch existing.payment.state {
                case .held: return .use(existing)
                case .actionRequired: return .recheck(existing)
                // A request with this quote died before the gateway answered: ask again under the same key.
                case .authorizing: return .ask(existing)
                case .failed, .released, .captured, .partiallyCaptured, .debt: break
                }
            }
            guard let card else { throw TripError.payment(TripPayments.methodRequired) }
            var payment = TripPayment(
                gateway: gateway.name, methodId: card.id, card: card.card, currency: quote.price.total.currency,
                heldMinor: quote.price.total.amountMinor)
            payment.token = card.token
            let attempt = PaymentAttempt(
                quoteId: quote.id, accountId: account.id, payment: payment, attempt: (previous?.attempt ?? 0) + 1,
                createdAt: at)
            try await tx.save(attempt)
            return .ask(attempt)
        }
        var attempt: PaymentAttempt
        let event: PaymentEvent
        switch step {
        case .use(let held):
            return held
        case .ask(let asking):
            attempt = asking
            do {
                let intent = try await gateway.authorize(Self.holdRequest(asking))
                event = Self.event(for: intent)
            } catch {
                event = try Self.event(for: error, log: payments.log)
            }
        case .recheck(let challenged):
            attempt = challenged
            do {
                event = Self.event(for: try await gateway.retrieve(intentId: challenged.payment.intentId ?? ""))
            } catch {
                event = try Self.event(for: error, log: payments.log)
            }
        }
        guard case .success(let payment) = PaymentMachine.apply(event, to: attempt.payment) else {
            // The same challenge, still unanswered.
            if case .challenged(_, let url) = event {
                _ = try await answer(.payment(TripPayments.challenge(url)), idempotency: idempotency)
            }
            throw TripError.contended
        }
        attempt.payment = payment
        attempt.updatedAt = at
        let refusal: TripError? =
            switch payment.state {
            case .actionRequired: .payment(TripPayments.challenge(payment.actionURL ?? URL(string: "about:blank")!))
            case .failed:
                .payment(
                    TripPayments.declined(
                        payment.decline ?? GatewayDecline(code: "card_declined", declineCode: nil, message: "")))
            default: nil
            }
        // A hold placed is saved by the transaction that creates the trip with it (one write fewer per request); until
        // then the attempt reads as before the call (`authorizing`, or `actionRequired` with its intent), which the
        // reconciler resolves (under the same key) if the trip never comes.
        if payment.state == .held { return attempt }
        let saved = attempt
        try await transaction { tx in
            try await tx.save(saved)
            if let refusal { try await Self.finish(tx, idempotency, .failure(refusal), at: at) }
        }
        if let refusal { throw refusal }
        return attempt
    }

    /// The hold an attempt asks for; the same attempt always asks the same (so its key replays, never holds twice).
    static func holdRequest(_ attempt: PaymentAttempt) -> AuthorizationRequest {
        AuthorizationRequest(
            amountMinor: attempt.payment.heldMinor, currency: attempt.payment.currency,
            paymentMethod: attempt.payment.token ?? "",
            idempotencyKey: attempt.holdKey, description: "EnRoute quote \(attempt.quoteId)")
    }

    /// The machine's event for the intent the gateway answered with.
    static func event(for intent: GatewayIntent) -> PaymentEvent {
        switch intent.status {
        case .requiresCapture:
            return .authorized(
                intentId: intent.id,
                amountMinor: intent.amountCapturable > 0 ? intent.amountCapturable : intent.amountMinor)
        case .requiresAction:
            return .challenged(intentId: intent.id, url: intent.actionURL ?? URL(string: "about:blank")!)
        case .canceled, .requiresPaymentMethod, .requiresConfirmation, .processing, .succeeded:
            return .declined(
                intent.lastError
                    ?? GatewayDecline(
                        code: "card_declined", declineCode: "generic_decline", message: "The hold was not placed."))
        }
    }

    /// A gateway error as the machine's event; an answer that does not say what happened is 503 (retry with the same
    /// key).
    static func event(for error: any Error, log: @Sendable (String) -> Void) throws -> PaymentEvent {
        switch error as? PaymentGatewayError {
        case .declined(let decline, _)?: return .declined(decline)
        case .rejected(let message)?:
            return .declined(GatewayDecline(code: "invalid_payment_method", declineCode: nil, message: message))
        case .ambiguous(let message)?:
            log("payments: the gateway's answer was unclear (\(message)); the request may be retried with the same key")
            throw TripError.contended
        case nil: throw error
        }
    }

    /// The refusal in a gateway error (a decline, or a request the gateway rejects); nil when the answer was unclear.
    static func refusal(_ error: PaymentGatewayError) -> GatewayDecline? {
        switch error {
        case .declined(let decline, _): decline
        case .rejected(let message): GatewayDecline(code: "invalid_payment_method", declineCode: nil, message: message)
        case .ambiguous: nil
        }
    }

    /// In the creating transaction: the hold becomes the trip's, and the ledger records it.
    static func attach(
        _ attempt: PaymentAttempt, to trip: TripRecord, in tx: any TripTransaction, at: Date
    ) async throws {
        guard var current = try await tx.paymentAttempt(quoteId: attempt.quoteId), current.tripId == nil else {
            throw TripStoreConflict("payment attempt of \(attempt.quoteId)")
        }
        // The hold this request placed, saved here rather than in a transaction of its own.
        if current.payment.state == .authorizing || current.payment.state == .actionRequired,
            current.attempt == attempt.attempt,
            attempt.payment.state == .held
        {
            current.payment = attempt.payment
        }
        guard current.payment.state == .held else { throw TripStoreConflict("payment attempt of \(attempt.quoteId)") }
        current.tripId = trip.id
        current.updatedAt = at
        try await tx.save(current)
        try await tx.post(
            Ledger.move(
                "hold", id: "hold:\(trip.id)", trip: trip.id, from: Ledger.card(trip.customerId),
                to: Ledger.hold(trip.customerId),
                amount: current.payment.heldMinor, currency: current.payment.currency, at: at))
    }

    /// Releases a hold whose trip was never created (refused after the hold, or a request that died), once; `placed`
    /// is the attempt as this process last knew it (its intent, when the stored one still reads `authorizing`).
    func releaseUnattached(_ quoteId: String, placed: PaymentAttempt? = nil) async {
        guard let payments else { return }
        let at = now()
        do {
            guard let attempt = try await transaction({ tx in try await tx.paymentAttempt(quoteId: quoteId) }),
                attempt.tripId == nil,
                !PaymentMachine.isSettled(attempt.payment.state)
            else { return }
            var intent = attempt.payment.intentId
            if intent == nil, attempt.payment.state == .authorizing, let placed, placed.attempt == attempt.attempt {
                intent = placed.payment.intentId
            }
            if intent == nil, attempt.payment.state == .authorizing {
                // The gateway's answer was lost (the process died during the call): the same key gives its first answer
                // (or places the hold now), which is then released.
                let outcome: Result<GatewayIntent, PaymentGatewayError>
                do { outcome = .success(try await payments.gateway.authorize(Self.holdRequest(attempt))) } catch {
                    outcome = .failure(error)
                }
                switch outcome {
                case .success(let found): intent = found.id
                case .failure(let error): if Self.refusal(error) == nil { throw error }
                }
            }
            if let intent {
                _ = try await payments.gateway.cancel(intentId: intent, idempotencyKey: "release:\(attempt.holdKey)")
            }
            try await transaction { tx in
                guard var current = try await tx.paymentAttempt(quoteId: quoteId), current.tripId == nil,
                    case .success(let released) = PaymentMachine.apply(.released, to: current.payment)
                else { return }
                current.payment = released
                current.updatedAt = at
                try await tx.save(current)
            }
            payments.log("payments: released the hold of quote \(quoteId), which no trip took")
        } catch {
            payments.log("payments: could not release the hold of quote \(quoteId) yet: \(error)")
        }
    }

    // MARK: - Settlement after the trip

    /// What settling a trip did; `retryLater` when a measurement was not ready.
    public enum Settlement: Sendable, Equatable { case done, nothingToDo, retryLater }

    /// Captures the final price (or the cancellation fee) out of the ended trip's hold and releases the rest; a final
    /// price above the hold charges the difference off-session, and a refusal there becomes a debt. Every gateway call
    /// carries a key derived from the trip and the operation, so running this again never moves money twice.
    @discardableResult
    public func settlePayment(
        of tripId: String, measurement: (any TripMeasurement)?, final: Bool = false
    ) async throws -> Settlement {
        let payments = try money
        let rules = payments.rules, gateway = payments.gateway
        guard let trip = try store.trip(id: tripId), !trip.status.isActive, let payment = trip.payment,
            payment.state == .held,
            let intent = payment.intentId
        else { return .nothingToDo }
        let timeline = TripTimeline(trip: trip, changes: try store.changes(tripId: tripId))
        let at = now()
        var price: PriceBreakdown?
        var take = 0
        var reasonLine: PriceLine?
        switch trip.status {
        case .ride(.completed), .delivery(.delivered):
            let quoted = trip.quotedPrice ?? PriceBreakdown(lines: [], currency: payment.currency)
            if trip.kind == .ride {
                let wait =
                    timeline.startedAt.flatMap { start in timeline.arrivedAt.map { start.timeIntervalSince($0) } } ?? 0
                let changed = !QuoteBook.same(trip.dropoff, await payments.quotes.quoteDropoff(trip) ?? trip.dropoff)
                let free = TimeInterval((rules.products[trip.productID ?? ""]?.freeWaitMinutes ?? 0) * 60)
                var measured = (distanceMeters: 0.0, durationSeconds: 0.0)
                if changed || wait > free {
                    switch await measurement?.measured(trip, final: final) ?? .none {
                    case .value(let d, let t): measured = (d, t)
                    case .pending: return .retryLater
                    case .none:
                        if let id = trip.quoteId, let quote = try? await payments.quotes.store.quote(id: id) {
                            measured = (quote.distanceMeters, quote.durationSeconds)
                        }
                    }
                }
                price = Pricing.finalRide(
                    quote: quoted, product: trip.productID ?? "", demand: trip.demand ?? 1,
                    outcome: .init(
                        destinationChanged: changed, waitSeconds: wait, distanceMeters: measured.distanceMeters,
                        durationSeconds: measured.durationSeconds), rules: rules)
            } else {
                price = Pricing.finalBasket(quote: quoted, changes: trip.basketChanges ?? [], rules: rules)
            }
            take = price?.total.amountMinor ?? payment.heldMinor
        case .ride(.cancelled), .delivery(.cancelled):
            let byCustomer = trip.cancellation?.by == .customer
            let noShow = trip.cancellation?.by == .provider && timeline.arrivedAt != nil
            if byCustomer || noShow, let assigned = timeline.assignedAt {
                let progressed =
                    timeline.arrivedAt != nil
                    ? true : await measurement?.providerProgressed(trip, since: assigned) ?? false
                if let fee = Pricing.cancellationFee(
                    assignedAt: assigned, arrivedAt: timeline.arrivedAt, cancelledAt: timeline.endedAt ?? at,
                    providerProgressed: progressed, rules: rules)
                {
                    take = min(fee.amountMinor, payment.heldMinor)
                    reasonLine = PriceLine(
                        kind: "cancellationFee", label: "Cancellation fee",
                        amount: Money(amountMinor: take, currency: fee.currency),
                        reason: noShow
                            ? "No-show: the provider waited at pickup" : "Cancelled after the provider was on the way")
                }
            }
        default:
            break
        }
        // The gateway first (idempotent keys), then one transaction records what it did.
        var events: [PaymentEvent] = []
        var rows: [LedgerEntry] = []
        let customer = trip.customerId, c = payment.currency
        let captured = min(take, payment.heldMinor)
        if captured > 0 {
            _ = try await gateway.capture(intentId: intent, amountMinor: captured, idempotencyKey: "capture:\(tripId)")
            events.append(.captured(amountMinor: captured))
            rows += Ledger.move(
                reasonLine == nil ? "capture" : "fee", id: "capture:\(tripId)", trip: tripId,
                from: Ledger.hold(customer), to: Ledger.trip(tripId),
                amount: captured, currency: c, at: at)
        } else {
            _ = try await gateway.cancel(intentId: intent, idempotencyKey: "release:\(tripId)")
            events.append(.released)
        }
        rows += Ledger.move(
            "release", id: "release:\(tripId)", trip: tripId, from: Ledger.hold(customer), to: Ledger.card(customer),
            amount: payment.heldMinor - captured, currency: c, at: at)
        var collected = captured
        if take > payment.heldMinor {
            let extra = take - payment.heldMinor
            let outcome: Result<GatewayIntent, PaymentGatewayError>
            do {
                outcome = .success(
                    try await gateway.charge(
                        AuthorizationRequest(
                            amountMinor: extra, currency: c, paymentMethod: payment.token ?? "",
                            idempotencyKey: "charge:\(tripId)", description: "EnRoute trip \(tripId), above the hold")))
            } catch {
                outcome = .failure(error)
            }
            switch outcome {
            case .success:
                events.append(.charged(amountMinor: extra))
                rows += Ledger.move(
                    "charge", id: "charge:\(tripId)", trip: tripId, from: Ledger.card(customer),
                    to: Ledger.trip(tripId), amount: extra, currency: c, at: at)
            case .failure(let error):
                guard let decline = Self.refusal(error) else { throw error }
                events.append(.chargeFailed(amountMinor: extra, decline))
                rows += Ledger.move(
                    "debt", id: "debt:\(tripId)", trip: tripId, from: Ledger.owed(customer), to: Ledger.trip(tripId),
                    amount: extra, currency: c, at: at)
            }
            collected = take
        }
        // A basket's goods are the merchant's; the provider's share is of the rest (the fare, or the delivery's fees).
        let goods =
            trip.kind == .delivery && reasonLine == nil
            ? min(
                collected,
                max(
                    0,
                    (price?.lines ?? []).filter { $0.kind == "item" || $0.kind == "adjustment" }.reduce(0) {
                        $0 + $1.amount.amountMinor
                    }))
            : 0
        if let merchant = trip.merchantId {
            rows += Ledger.move(
                "earning", id: "goods:\(tripId)", trip: tripId, from: Ledger.trip(tripId),
                to: Ledger.merchant(merchant),
                amount: goods, currency: c, at: at)
        }
        rows += Ledger.earning(
            id: "earning:\(tripId)", trip: tripId, provider: trip.providerId, amount: collected - goods,
            providerShare: Pricing.providerShare(of: collected - goods, rules: rules), currency: c, at: at)
        let finalPrice: PriceBreakdown? = price ?? reasonLine.map { PriceBreakdown(lines: [$0], currency: c) }
        try await changePayment(of: tripId, expecting: payment.version, events: events, ledger: rows) { trip in
            trip.finalPrice = finalPrice
            trip.fare = finalPrice?.total ?? Money(amountMinor: 0, currency: c)
        }
        return .done
    }

    /// Applies `events` to the trip's payment in one transaction with `ledger`'s rows and `edit`: a new trip version
    /// the parties see, logged as the backend's change.
    func changePayment(
        of tripId: String, expecting paymentVersion: Int?, events: [PaymentEvent], ledger: [LedgerEntry],
        edit: @escaping @Sendable (inout TripRecord) -> Void = { _ in }
    ) async throws {
        let at = now()
        let result: (old: TripRecord, new: TripRecord)? = try await transaction { tx in
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
        if let result { publishCommitted(result.new, previous: result.old) }
    }

    // MARK: - Tips, ratings, debts

    /// The customer tips the provider once, within the tip window after the trip ended: recorded now (the provider's
    /// stream hears of it at once) and charged off-session by the payment worker.
    public func tip(
        _ tripId: String, amountMinor: Int, by account: Account, idempotency: IdempotencyContext?
    ) async throws -> TripRecord {
        let payments = try money
        guard account.role == .customer else { throw TripError.forbidden("Only the customer tips.") }
        guard (1...payments.maximumTipMinor).contains(amountMinor) else {
            throw TripError.invalid(pointer: "/amountMinor", detail: "must be from 1 to \(payments.maximumTipMinor)")
        }
        let at = now(), window = payments.tipWindow, currency = payments.rules.currency
        let changes = try store.changes(tripId: tripId)
        return try await recordChange(tripId, by: account, idempotency: idempotency) { trip, tx in
            let ended = TripTimeline(trip: trip, changes: changes).endedAt
            if trip.status != .ride(.completed), trip.status != .delivery(.delivered) {
                return .failure(.refused(MoveRefusal("A tip can be given once the trip is complete."), trip))
            }
            if trip.providerId == nil || trip.payment == nil {
                return .failure(.refused(MoveRefusal("This trip cannot take a tip."), trip))
            }
            if trip.tip != nil { return .failure(.refused(MoveRefusal("This trip was tipped already."), trip)) }
            if let ended, at.timeIntervalSince(ended) > window {
                return .failure(.refused(MoveRefusal("Tips can be given up to 72 hours after the trip."), trip))
            }
            var next = trip
            next.tip = TripTip(amount: Money(amountMinor: amountMinor, currency: currency), givenAt: at)
            try await tx.enqueue(PaymentJob.tip(tripId).message(at: at))
            return .success(next)
        }
    }

    /// Charges a recorded tip (the payment worker's job): the provider's whole, in the ledger; a refusal marks it
    /// failed.
    public func chargeTip(of tripId: String) async throws {
        let payments = try money
        guard let trip = try store.trip(id: tripId), var tip = trip.tip, tip.state == .pending,
            let payment = trip.payment,
            let provider = trip.providerId
        else { return }
        let at = now()
        var rows: [LedgerEntry] = []
        let outcome: Result<GatewayIntent, PaymentGatewayError>
        do {
            outcome = .success(
                try await payments.gateway.charge(
                    AuthorizationRequest(
                        amountMinor: tip.amount.amountMinor, currency: tip.amount.currency,
                        paymentMethod: payment.token ?? "", idempotencyKey: "tip:\(tripId)",
                        description: "EnRoute tip, trip \(tripId)")))
        } catch {
            outcome = .failure(error)
        }
        switch outcome {
        case .success(let intent):
            tip.state = .charged
            tip.intentId = intent.id
            rows = Ledger.move(
                "tip", id: "tip:\(tripId)", trip: tripId, from: Ledger.card(trip.customerId),
                to: Ledger.provider(provider),
                amount: tip.amount.amountMinor, currency: tip.amount.currency, at: at)
        case .failure(let error):
            guard let decline = Self.refusal(error) else { throw error }
            tip.state = .failed
            tip.decline = decline
        }
        let charged = tip
        try await changePayment(of: tripId, expecting: nil, events: [], ledger: rows) { $0.tip = charged }
    }

    /// A party rates the other once the trip is complete: the customer the provider, the provider the customer.
    public func rate(_ tripId: String, stars: Int, comment: String?, by account: Account) async throws -> TripRecord {
        guard account.role == .customer || account.role == .provider else {
            throw TripError.forbidden("Only the customer and the provider rate a trip.")
        }
        guard (1...5).contains(stars) else { throw TripError.invalid(pointer: "/stars", detail: "must be from 1 to 5") }
        if let comment, comment.count > 1000 {
            throw TripError.invalid(pointer: "/comment", detail: "must be at most 1000 characters")
        }
        let at = now()
        let rated = try await recordChange(tripId, by: account, idempotency: nil) { trip, tx in
            guard trip.status == .ride(.completed) || trip.status == .delivery(.delivered) else {
                return .failure(.refused(MoveRefusal("A trip can be rated once it is complete."), trip))
            }
            guard !(trip.ratings ?? []).contains(where: { $0.by == account.role }) else {
                return .failure(.refused(MoveRefusal("You rated this trip already."), trip))
            }
            var next = trip
            next.ratings = (trip.ratings ?? []) + [TripRating(by: account.role, stars: stars, comment: comment, at: at)]
            if account.role == .customer, let provider = trip.providerId {
                try await tx.addRating(provider: provider, stars: stars)
            }
            return .success(next)
        }
        if account.role == .customer, let provider = rated.providerId { noteRating(provider: provider, stars: stars) }
        return rated
    }

    /// Pays what the customer owes, trip by trip, on the default card (the customer is present); a refusal is a 402.
    public func settleBalance(by account: Account, key: String) async throws -> AccountBalance {
        let payments = try money
        guard account.role == .customer else { throw TripError.forbidden("Only customers have a balance.") }
        let debts = try payments.debts(of: account.id)
        guard !debts.isEmpty else { return try payments.balance(of: account.id) }
        guard let card = try await payments.defaultCard(account.id) else {
            throw TripError.payment(TripPayments.methodRequired)
        }
        for (tripId, amount) in debts {
            let at = now()
            do {
                _ = try await payments.gateway.charge(
                    AuthorizationRequest(
                        amountMinor: amount, currency: payments.rules.currency, paymentMethod: card.token,
                        idempotencyKey: "settle:\(tripId):\(key)", description: "EnRoute balance, trip \(tripId)"))
            } catch {
                if case .declined(let decline) = try Self.event(for: error, log: payments.log) {
                    throw TripError.payment(TripPayments.declined(decline))
                }
                throw error
            }
            let rows = Ledger.move(
                "settlement", id: "settle:\(tripId):\(key)", trip: tripId, from: Ledger.card(account.id),
                to: Ledger.owed(account.id),
                amount: amount, currency: payments.rules.currency, at: at)
            try await changePayment(of: tripId, expecting: nil, events: [.settled(amountMinor: amount)], ledger: rows)
        }
        return try payments.balance(of: account.id)
    }

    // MARK: - Gateway callbacks and the reconciler

    /// Applies a gateway callback: `payment_intent.succeeded` marks the trip paid; a hold that expired or was cancelled
    /// at the gateway (`charge.expired`, `payment_intent.canceled`) is released on the trip.
    public func apply(_ event: GatewayEvent) async throws {
        guard let attempt = try store.paymentAttempt(intentId: event.intent.id), let tripId = attempt.tripId else {
            return
        }
        switch event.type {
        case Self.paidEvent:
            guard let trip = try store.trip(id: tripId), let payment = trip.payment, payment.paidAt == nil else {
                return
            }
            // The callback can overtake the capture's own transaction: the worker tries it again shortly.
            guard PaymentMachine.isSettled(payment.state) else { throw PaymentNotSettledYet(tripId: tripId) }
            try await changePayment(of: tripId, expecting: nil, events: [.confirmed(at: event.created)], ledger: [])
        case let type where Self.heldEndedEvents.contains(type):
            guard let trip = try store.trip(id: tripId), trip.payment?.state == .held else { return }
            let at = now()
            let rows = Ledger.move(
                "release", id: "release:\(tripId)", trip: tripId, from: Ledger.hold(trip.customerId),
                to: Ledger.card(trip.customerId),
                amount: trip.payment?.heldMinor ?? 0, currency: trip.payment?.currency ?? "", at: at)
            try await changePayment(of: tripId, expecting: nil, events: [.released], ledger: rows)
            payments?.log("payments: the hold of trip \(tripId) ended at the gateway (\(event.type))")
        default:
            // payment_intent.payment_failed and others: the synchronous answers already recorded the outcome.
            break
        }
    }

    /// One pass of the reconciler: releases holds no trip took, and queues settlement for ended trips whose hold is
    /// still open (a crash between the end and the capture). Returns how many it acted on.
    @discardableResult
    public func reconcilePayments() async throws -> Int {
        let payments = try money
        let at = now()
        var acted = 0
        for attempt in try store.unattachedPaymentAttempts(
            before: at.addingTimeInterval(-payments.unattachedHoldTimeout))
        where !PaymentMachine.isSettled(attempt.payment.state) {
            await releaseUnattached(attempt.quoteId)
            acted += 1
        }
        // Holds close to their expiry at the bank (a merchant-initiated Visa hold lasts about 5 days): ask the gateway
        // whether each still stands; one it already let go is released on the trip, so nothing is captured on air.
        for trip in heldTrips(placedBefore: at.addingTimeInterval(-payments.holdRecheckAge)) {
            guard let payment = trip.payment, let intent = payment.intentId else { continue }
            let outcome: Result<GatewayIntent, PaymentGatewayError>
            do { outcome = .success(try await payments.gateway.retrieve(intentId: intent)) } catch {
                outcome = .failure(error)
            }
            guard case .success(let current) = outcome, current.status == .canceled else { continue }
            let rows = Ledger.move(
                "release", id: "release:\(trip.id)", trip: trip.id, from: Ledger.hold(trip.customerId),
                to: Ledger.card(trip.customerId),
                amount: payment.heldMinor, currency: payment.currency, at: at)
            try await changePayment(of: trip.id, expecting: payment.version, events: [.released], ledger: rows)
            payments.log("payments: the hold of trip \(trip.id) expired at the bank; released on the trip")
            acted += 1
        }
        return acted
    }

    /// Keeps and publishes a change made outside `move` (payments, tips, ratings), as `move` does.
    func publishCommitted(_ trip: TripRecord, previous: TripRecord) {
        commit(trip, previous: previous)
    }
}

/// A gateway callback arrived before the backend recorded the change it confirms.
struct PaymentNotSettledYet: Error, CustomStringConvertible {
    let tripId: String
    var description: String { "the payment of trip \(tripId) is not settled yet" }
}

extension QuoteBook {
    /// The drop-off the trip's quote priced, to tell whether the destination changed.
    func quoteDropoff(_ trip: TripRecord) async -> Coordinate? {
        guard let id = trip.quoteId else { return nil }
        return (try? await store.quote(id: id))?.dropoff
    }
}

extension TripService {
    /// The merchant marks basket lines missing or replaced before the order is ready; the final price follows them.
    public func changeBasket(
        _ orderId: String, changes: [BasketItemChange], by account: Account, idempotency: IdempotencyContext?
    ) async throws -> TripRecord {
        guard account.role == .merchant else { throw TripError.forbidden("Only the merchant changes a basket.") }
        guard !changes.isEmpty, changes.count <= 99 else {
            throw TripError.invalid(pointer: "/changes", detail: "must list 1 to 99 changes")
        }
        let currency = payments?.rules.currency ?? "EUR"
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
        return try await recordChange(orderId, by: account, idempotency: idempotency, kind: .delivery) { trip, _ in
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

    /// One change a party makes outside the trip machine (a tip, a rating, a basket change), in one transaction:
    /// `decide` refuses it or returns the edited trip (and may queue work in the transaction); the new version is
    /// logged as `account`'s change, the answer stored under the request's key, and the trip published.
    func recordChange(
        _ tripId: String, by account: Account, idempotency: IdempotencyContext?, kind: TripKind? = nil,
        _ decide: @escaping @Sendable (TripRecord, any TripTransaction) async throws -> Result<TripRecord, TripError>
    )
        async throws -> TripRecord
    {
        let at = now()
        let result: (Result<TripRecord, TripError>, TripRecord)? = try await transaction { tx in
            guard let trip = try await tx.trip(tripId), trip.isVisible(to: account), kind == nil || trip.kind == kind
            else { return nil }
            var outcome = try await decide(trip, tx)
            if case .success(var next) = outcome {
                next.version = trip.version + 1
                next.updatedAt = at
                try await tx.update(next, expectedVersion: trip.version)
                try await tx.append(
                    ChangeLogEntry(
                        tripId: tripId, version: next.version, status: next.status.name, actorRole: account.role,
                        actorId: account.id, serverTime: at))
                outcome = .success(next)
            }
            try await Self.finish(tx, idempotency, outcome, at: at)
            return (outcome, trip)
        }
        guard let (outcome, old) = result else { throw TripError.notFound }
        let changed = try outcome.get()
        publishCommitted(changed, previous: old)
        return changed
    }

    /// The gateway callbacks `apply(_:)` acts on. The others (a hold placed, a payment refused) only repeat what the
    /// gateway's own answer already recorded, so they are acknowledged without being queued.
    public static let appliedPaymentEvents: Set<String> = heldEndedEvents.union([paidEvent])
    /// The payment went through: the trip is marked paid.
    static let paidEvent = "payment_intent.succeeded"
    /// The hold ended at the gateway (cancelled, or expired at the bank): it is released on the trip.
    static let heldEndedEvents: Set<String> = ["payment_intent.canceled", "charge.expired"]

    /// Queues work for the payment worker outside any trip change (a gateway callback); a job queued already is left as
    /// it is. False, and nothing written, for a callback `apply(_:)` would ignore.
    @discardableResult
    public func enqueuePaymentJob(_ job: PaymentJob) async throws -> Bool {
        if case .event(let event) = job, !Self.appliedPaymentEvents.contains(event.type) { return false }
        let message = job.message(at: now())
        try await transaction { tx in try await tx.enqueue(message) }
        return true
    }

    /// The receipt of a trip the caller may see, once its payment settled (`nil` before).
    public func receipt(of tripId: String, for account: Account, path: [Coordinate]) throws -> Receipt? {
        let trip = try self.trip(tripId, for: account)
        return Receipts.receipt(
            trip, changes: try store.changes(tripId: tripId), ledger: try store.ledger(tripId: tripId), path: path)
    }
}
