public import Foundation
public import EnRouteModels
public import EnRouteDomain

/// Puts each dispatch offer in the push outbox when its provider has a registered device (a platform push carries it as
/// well), so that the offer reaches a closed app too.
///
/// The job expires with the offer; whether the offer is still open is asked again at send time, since
/// it may end before the sender gets to it.
public struct OfferPushPlanner: OfferObserver {
    private let queue: PushQueue

    /// A planner writing through `queue`.
    public init(queue: PushQueue) { self.queue = queue }

    public func offerMade(_ offer: Offer, to provider: String) async {
        // The live stream already carried the offer; a lost push must not hold up dispatch.
        await queue.enqueue(
            id: "apns.offer.\(offer.offerId)", job: try PushJob.offer(offer, to: provider),
            for: provider, failure: "offer push for \(offer.offerId)")
    }
}
