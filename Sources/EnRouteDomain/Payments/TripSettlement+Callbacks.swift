public import Foundation
public import EnRouteModels
import EnRouteLogging

extension TripSettlement {
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
        let message = job.message(at: commits.now())
        try await commits.transaction { tx in try await tx.enqueue(message) }
        return true
    }

    /// Applies a gateway callback: `payment_intent.succeeded` marks the trip paid; a hold that expired or was cancelled
    /// at the gateway (`charge.expired`, `payment_intent.canceled`) is released on the trip.
    public func apply(_ event: GatewayEvent) async throws {
        let store = commits.store
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
            guard let trip = try store.trip(id: tripId), let payment = trip.payment, payment.state == .held else {
                return
            }
            try await release(trip, payment, expecting: nil, at: commits.now())
            payments.log.info("payments: the hold of trip \(tripId) ended at the gateway (\(event.type))")
        default:
            // payment_intent.payment_failed and others: the synchronous answers already recorded the outcome.
            break
        }
    }

    /// One pass of the reconciler: releases holds no trip took, and queues settlement for ended trips whose hold is
    /// still open (a crash between the end and the capture). Returns how many it acted on.
    @discardableResult
    public func reconcilePayments() async throws -> Int {
        let at = commits.now()
        var acted = 0
        for attempt in try commits.store.unattachedPaymentAttempts(
            before: at.addingTimeInterval(-payments.unattachedHoldTimeout))
        where !PaymentMachine.isSettled(attempt.payment.state) {
            await holds.releaseUnattached(attempt.quoteId)
            acted += 1
        }
        // Holds close to their expiry at the bank (a merchant-initiated Visa hold lasts about 5 days): ask the gateway
        // whether each still stands; one it already let go is released on the trip, so nothing is captured on air.
        for trip in commits.cache.heldTrips(placedBefore: at.addingTimeInterval(-payments.holdRecheckAge)) {
            guard let payment = trip.payment, let intent = payment.intentId,
                case .canceled? = try? await payments.gateway.retrieve(intentId: intent).status
            else { continue }
            try await release(trip, payment, expecting: payment.version, at: at)
            payments.log.warning("payments: the hold of trip \(trip.id) expired at the bank; released on the trip")
            acted += 1
        }
        return acted
    }

    /// Releases the trip's hold on the trip and in the ledger (the gateway let it go already).
    private func release(
        _ trip: TripRecord, _ payment: TripPayment, expecting version: Int?, at: Date
    ) async throws {
        let rows = Ledger.move(
            "release", id: "release:\(trip.id)", trip: trip.id, from: Ledger.hold(trip.customerId),
            to: Ledger.card(trip.customerId), amount: payment.heldMinor, currency: payment.currency, at: at)
        try await changePayment(of: trip.id, expecting: version, events: [.released], ledger: rows)
    }
}

/// A gateway callback arrived before the backend recorded the change it confirms.
struct PaymentNotSettledYet: Error, CustomStringConvertible {
    let tripId: String
    var description: String { "the payment of trip \(tripId) is not settled yet" }
}
