public import Foundation
public import EnRouteModels
import Synchronization

/// What the parties give each other after a trip: the customer's tip (recorded at once, charged by the payment
/// worker) and each party's rating of the other, with every provider's running average.
public final class TipsAndRatings: Sendable {
    let commits: TripCommits
    let settlement: TripSettlement?
    /// Every provider's rating totals, loaded at start and kept as customers rate.
    private let totals = Mutex<[String: RatingTotal]>([:])

    init(commits: TripCommits, settlement: TripSettlement?) {
        self.commits = commits; self.settlement = settlement
    }

    /// Loads every provider's rating totals from the store (once, at start).
    func warm() throws {
        let ratings = try commits.store.providerRatings()
        totals.withLock { $0 = ratings }
    }

    private var money: TripSettlement {
        get throws(TripError) { try TripSettlement.required(settlement) }
    }

    /// The customer tips the provider once, within the tip window after the trip ended: recorded now (the provider's
    /// stream hears of it at once) and charged off-session by the payment worker.
    public func tip(
        _ tripId: String, amountMinor: Int, by account: Account, idempotency: IdempotencyContext?
    ) async throws -> TripRecord {
        let payments = try money.payments
        guard account.role == .customer else { throw TripError.forbidden("Only the customer tips.") }
        guard (1...payments.maximumTipMinor).contains(amountMinor) else {
            throw TripError.invalid(pointer: "/amountMinor", detail: "must be from 1 to \(payments.maximumTipMinor)")
        }
        let at = commits.now(), window = payments.tipWindow, currency = payments.rules.currency
        let changes = try commits.store.changes(tripId: tripId)
        return try await commits.recordChange(tripId, by: account, idempotency: idempotency) { trip, tx in
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
        let settlement = try money
        guard let trip = try commits.store.trip(id: tripId), var tip = trip.tip, tip.state == .pending,
            let payment = trip.payment,
            let provider = trip.providerId
        else { return }
        let at = commits.now()
        var rows: [LedgerEntry] = []
        do {
            let intent = try await settlement.payments.gateway.charge(
                AuthorizationRequest(
                    amountMinor: tip.amount.amountMinor, currency: tip.amount.currency,
                    paymentMethod: payment.token ?? "", idempotencyKey: "tip:\(tripId)",
                    description: "EnRoute tip, trip \(tripId)"))
            tip.state = .charged
            tip.intentId = intent.id
            rows = Ledger.move(
                "tip", id: "tip:\(tripId)", trip: tripId, from: Ledger.card(trip.customerId),
                to: Ledger.provider(provider), amount: tip.amount.amountMinor, currency: tip.amount.currency, at: at)
        } catch {
            guard let decline = PaymentHolds.refusal(error) else { throw error }
            tip.state = .failed
            tip.decline = decline
        }
        let charged = tip
        try await settlement.changePayment(of: tripId, expecting: nil, events: [], ledger: rows) { $0.tip = charged }
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
        let at = commits.now()
        let rated = try await commits.recordChange(tripId, by: account, idempotency: nil) { trip, tx in
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
        if account.role == .customer, let provider = rated.providerId {
            totals.withLock {
                $0[provider, default: RatingTotal(count: 0, sum: 0)].count += 1; $0[provider]!.sum += stars
            }
        }
        return rated
    }

    /// The average of the customers' ratings of `provider`, nil before anyone rated them (the profile's rating stands).
    public func averageRating(provider: String) -> Double? {
        totals.withLock { $0[provider] }.flatMap { $0.count > 0 ? $0.average : nil }
    }
}
