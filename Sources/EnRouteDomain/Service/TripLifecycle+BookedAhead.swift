public import Foundation
public import EnRouteModels

/// Trips booked ahead: stored without a hold, and entering matching shortly before they are due.
extension TripLifecycle {
    /// How a booked-ahead trip's search began.
    public enum MatchingStart: Sendable, Equatable {
        /// The search may run: the trip, with `matchingStartedAt` set (now or by an earlier call, on any node).
        case started(TripRecord)
        /// The hold could not be placed (the card was refused, or the quote is gone): the trip is cancelled and nothing
        /// is charged.
        case refused(TripRecord)
        /// The trip no longer waits for a provider (cancelled, assigned by ops, gone).
        case gone
    }

    /// The reason a booked-ahead trip is cancelled with when the hold is refused.
    public static let declinedReason = "The card was declined when the search began; nothing was charged."
    /// The reason a booked-ahead trip is cancelled with when the quote it was priced on is no longer stored.
    public static let quoteLostReason =
        "The booking's price could not be found when the search began; nothing was charged."

    /// Begins a booked-ahead trip's search, once: places the hold for its quote on the customer's default card and
    /// records when the search began in one change. A second caller (a restarted node, another node of the cluster)
    /// finds it begun and places nothing: the hold is asked under the quote's key and attached to one trip only.
    public func startMatching(_ tripId: String) async throws -> MatchingStart {
        guard let trip = try commits.cache.cached(tripId), trip.waitsForProvider else { return .gone }
        guard trip.isBookedAhead else { return .started(trip) }
        var attempt: PaymentAttempt?
        if let holds, let quoteId = trip.quoteId, trip.payment == nil {
            let customer = Account(id: trip.customerId, role: .customer)
            guard let quote = try await holds.payments.quotes.store.quote(id: quoteId) else {
                return try await refuse(tripId, reason: Self.quoteLostReason)
            }
            do {
                attempt = try await holds.hold(quote, by: customer, idempotency: nil)
            } catch TripError.payment {
                await holds.releaseUnattached(quoteId)
                return try await refuse(tripId, reason: Self.declinedReason)
            } catch TripError.invalid(pointer: "/quoteId", _) {
                // Another caller placed the hold and attached it to this trip in the change that began its search.
                attempt = nil
            }
        }
        let at = commits.now()
        let observers = commits.observers
        let placed = attempt
        let outcome: (TripRecord, TripRecord)? = try await commits.transaction { tx in
            guard let stored = try await tx.trip(tripId), stored.waitsForProvider else { return nil }
            guard stored.isBookedAhead else { return (stored, stored) }
            var next = stored
            next.matchingStartedAt = at
            next.version += 1
            next.updatedAt = at
            if let placed {
                next.payment = placed.payment
                try await PaymentHolds.attach(placed, to: next, in: tx, at: at)
            }
            try await tx.update(next, expectedVersion: stored.version)
            try await tx.append(
                ChangeLogEntry(
                    tripId: next.id, version: next.version, status: next.status.name, actorRole: .backend,
                    actorId: Self.matchingActor, serverTime: at))
            for observer in observers { try await observer.tripChanged(from: stored, to: next, in: tx) }
            return (next, stored)
        }
        guard let (started, previous) = outcome else {
            if let quoteId = trip.quoteId, attempt != nil { await holds?.releaseUnattached(quoteId) }
            return .gone
        }
        if started.version != previous.version { commits.commit(started, previous: previous) }
        return .started(started)
    }

    /// Who the change log names for the backend's own steps on a booked-ahead trip.
    static let matchingActor = "dispatch"

    /// Cancels a booked-ahead trip whose hold could not be placed, saying why.
    private func refuse(_ tripId: String, reason: String) async throws -> MatchingStart {
        do {
            let cancelled = try await move(
                tripId, .cancel(reason: reason), by: Account(id: Self.matchingActor, role: .backend))
            return .refused(cancelled)
        } catch TripError.refused {
            return .gone
        }
    }
}
