public import EnRouteModels

/// What the offer card shows.
public struct OfferViewState: Sendable, Equatable {
    /// Where the offer stands.
    public enum Phase: Sendable, Equatable {
        /// Waiting for the provider's answer.
        case open
        /// An accept is on the wire.
        case accepting
        /// The trip is the provider's.
        case accepted(TripSnapshot)
        /// The provider said no.
        case declined
        /// The time ran out on the device's clock.
        case expired
        /// The server says it is gone (expired there, or taken): no accept is possible.
        case gone
    }

    /// The offer.
    public let offer: Offer
    /// Whole seconds left, rounded up; 0 once expired.
    public var secondsLeft: Int
    /// Where the offer stands.
    public var phase: Phase = .open
    /// A message for the provider, such as the offline error.
    public var message: String?

    /// True while accepting still makes sense.
    public var canAnswer: Bool { phase == .open && secondsLeft > 0 }

    /// "Add to your route: 3 stops" for an offer made while carrying another order (the route over both if
    /// accepted); nil for an offer carried alone.
    public var routeText: String? {
        guard let stops = offer.stops, !stops.isEmpty else { return nil }
        return "Add to your route: \(stops.count) \(stops.count == 1 ? "stop" : "stops")"
    }

    /// The planned stops, in order, as "Hand over order 8F3K" lines; empty for an offer carried alone.
    public var routeLines: [String] { (offer.stops ?? []).map(ProviderTripViewState.text) }

    /// The state of a fresh card.
    public init(offer: Offer, secondsLeft: Int) { self.offer = offer; self.secondsLeft = secondsLeft }
}
