public import Foundation
public import EnRouteModels
import EnRouteLogging

/// The hold on the customer's card placed when a trip is confirmed: asked of the gateway under a key derived from the
/// quote (so a retry never holds twice), attached to the trip in the transaction that creates it, and released when no
/// trip takes it.
public final class PaymentHolds: Sendable {
    public let payments: TripPayments
    let commits: TripCommits

    init(payments: TripPayments, commits: TripCommits) {
        self.payments = payments; self.commits = commits
    }

    /// What a confirmation does with its quote's attempt: use a hold placed, ask the gateway, or ask again about a
    /// challenge.
    private enum Step: Sendable { case use(PaymentAttempt), ask(PaymentAttempt), recheck(PaymentAttempt) }

    /// Holds the quote's total on the customer's default card, or reuses the hold this quote placed already (after a
    /// bank challenge, or a request that died after the hold); a refusal or a challenge is answered as 402 and stored
    /// under the request's key.
    func hold(_ quote: Quote, by account: Account, idempotency: IdempotencyContext?) async throws -> PaymentAttempt {
        let at = commits.now()
        let step = try await begin(quote, by: account, at: at)
        var attempt: PaymentAttempt
        let event: PaymentEvent
        switch step {
        case .use(let held):
            return held
        case .ask(let asking):
            attempt = asking
            do {
                event = Self.event(for: try await payments.gateway.authorize(Self.holdRequest(asking)))
            } catch {
                event = try Self.event(for: error, log: payments.log)
            }
        case .recheck(let challenged):
            attempt = challenged
            do {
                event = Self.event(
                    for: try await payments.gateway.retrieve(intentId: challenged.payment.intentId ?? ""))
            } catch {
                event = try Self.event(for: error, log: payments.log)
            }
        }
        guard case .success(let payment) = PaymentMachine.apply(event, to: attempt.payment) else {
            // The same challenge, still unanswered.
            if case .challenged(_, let url) = event {
                _ = try await commits.answer(.payment(TripPayments.challenge(url)), idempotency: idempotency)
            }
            throw TripError.contended
        }
        attempt.payment = payment
        attempt.updatedAt = at
        return try await record(attempt, idempotency: idempotency, at: at)
    }

    /// Reads the quote's attempt and decides what to ask, saving a new attempt when the gateway is to be asked afresh.
    private func begin(_ quote: Quote, by account: Account, at: Date) async throws -> Step {
        let card = try await payments.defaultCard(account.id)
        let gateway = payments.gateway.name
        return try await commits.transaction { tx in
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
                gateway: gateway, methodId: card.id, card: card.card, currency: quote.price.total.currency,
                heldMinor: quote.price.total.amountMinor)
            payment.token = card.token
            let attempt = PaymentAttempt(
                quoteId: quote.id, accountId: account.id, payment: payment, attempt: (previous?.attempt ?? 0) + 1,
                createdAt: at)
            try await tx.save(attempt)
            return .ask(attempt)
        }
    }

    /// Keeps what the gateway answered: a hold placed is saved by the transaction that creates the trip with it (one
    /// write fewer per request); a refusal or a challenge is saved now, answered under the request's key and thrown.
    private func record(
        _ attempt: PaymentAttempt, idempotency: IdempotencyContext?, at: Date
    ) async throws -> PaymentAttempt {
        let payment = attempt.payment
        let refusal: TripError? =
            switch payment.state {
            case .actionRequired: .payment(TripPayments.challenge(payment.actionURL ?? URL(string: "about:blank")!))
            case .failed:
                .payment(
                    TripPayments.declined(
                        payment.decline ?? GatewayDecline(code: "card_declined", declineCode: nil, message: "")))
            default: nil
            }
        // Until the trip is created the attempt reads as before the call (`authorizing`, or `actionRequired` with its
        // intent), which the reconciler resolves (under the same key) if the trip never comes.
        if payment.state == .held { return attempt }
        try await commits.transaction { tx in
            try await tx.save(attempt)
            if let refusal { try await TripCommits.finish(tx, idempotency, .failure(refusal), at: at) }
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
    static func event(for error: any Error, log: Logger) throws -> PaymentEvent {
        switch error as? PaymentGatewayError {
        case .declined(let decline, _)?: return .declined(decline)
        case .rejected(let message)?:
            return .declined(GatewayDecline(code: "invalid_payment_method", declineCode: nil, message: message))
        case .ambiguous(let message)?:
            log.warning(
                "payments: the gateway's answer was unclear (\(message)); the request may be retried with the same key")
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
        let at = commits.now()
        do {
            guard let attempt = try await commits.transaction({ tx in try await tx.paymentAttempt(quoteId: quoteId) }),
                attempt.tripId == nil,
                !PaymentMachine.isSettled(attempt.payment.state)
            else { return }
            if let intent = try await intent(of: attempt, placed: placed) {
                _ = try await payments.gateway.cancel(intentId: intent, idempotencyKey: "release:\(attempt.holdKey)")
            }
            try await commits.transaction { tx in
                guard var current = try await tx.paymentAttempt(quoteId: quoteId), current.tripId == nil,
                    case .success(let released) = PaymentMachine.apply(.released, to: current.payment)
                else { return }
                current.payment = released
                current.updatedAt = at
                try await tx.save(current)
            }
            payments.log.info("payments: released the hold of quote \(quoteId), which no trip took")
        } catch {
            payments.log.warning("payments: could not release the hold of quote \(quoteId) yet: \(error)")
        }
    }

    /// The gateway's intent for an unattached attempt, asked again under the same key when its answer was lost.
    private func intent(of attempt: PaymentAttempt, placed: PaymentAttempt?) async throws -> String? {
        if let intent = attempt.payment.intentId { return intent }
        guard attempt.payment.state == .authorizing else { return nil }
        if let placed, placed.attempt == attempt.attempt, let intent = placed.payment.intentId { return intent }
        // The gateway's answer was lost (the process died during the call): the same key gives its first answer (or
        // places the hold now), which is then released.
        do {
            return try await payments.gateway.authorize(Self.holdRequest(attempt)).id
        } catch {
            if Self.refusal(error) == nil { throw error }
            return nil
        }
    }
}
