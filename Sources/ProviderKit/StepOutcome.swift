public import EnRouteModels

/// The server's answer to one step (`onStepResult`).
public enum StepOutcome: Sendable, Equatable {
    /// Applied now, or earlier under the same change id: the trip as it stands.
    case applied(TripSnapshot)
    /// Refused (409): the real trip, and the server's reason.
    case rejected(TripSnapshot, reason: String)
}

/// The answer to accepting an offer.
public enum OfferAnswer: Sendable, Equatable {
    /// The trip is the provider's.
    case accepted(TripSnapshot)
    /// The offer expired or another provider took the trip (409): the real trip when the server sent it.
    case gone(TripSnapshot?, reason: String)
}
