public import EnRouteModels

/// Why the trip service did not do what was asked.
public enum TripError: Error, Sendable, Equatable {
    /// No such trip, or not the caller's to see: the same answer either way.
    case notFound
    /// The move is not allowed now; the real trip is attached.
    case refused(MoveRefusal, TripRecord)
    /// A field of the request is wrong (JSON Pointer and what is wrong).
    case invalid(pointer: String, detail: String)
    /// The caller's role may not do this at all.
    case forbidden(String)
    /// The customer already has an active trip of this kind.
    case alreadyActive(TripRecord)
    /// Concurrent changes kept winning over this one, past the service's retries; nothing was written.
    case contended
    /// The quote the request names ran out; a fresh one for the same request is attached.
    case quoteExpired(QuoteRefresh)
    /// The payment stopped the request (402): declined, a bank challenge, an outstanding balance, no card.
    case payment(PaymentProblem)
}

/// A fresh quote offered in place of an expired one.
public enum QuoteRefresh: Sendable, Equatable {
    case ride(Estimate)
    case order(OrderQuote)
}
