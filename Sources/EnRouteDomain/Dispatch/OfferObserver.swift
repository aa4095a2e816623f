public import EnRouteModels

/// Told of every offer dispatch makes, right after the provider's live stream got it: where the platform push hooks in,
/// without dispatch knowing how pushes travel.
public protocol OfferObserver: Sendable {
    /// `offer` went out to `provider`. The search waits for this, so it should only record the fact.
    func offerMade(_ offer: Offer, to provider: String) async
}
