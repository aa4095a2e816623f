public import Foundation
public import EnRouteModels
public import EnRouteDomain

/// Puts each dispatch offer in the push outbox when its provider has a registered device (seed 004
/// §44.4: "a platform push carries it as well"), so that the offer reaches a closed app too.
///
/// The job expires with the offer; whether the offer is still open is asked again at send time, since
/// it may end before the sender gets to it.
public struct OfferPushPlanner: OfferObserver {
    private let store: any TripStore
    private let devices: any DeviceRepository
    private let now: @Sendable () -> Date
    private let queued: @Sendable () -> Void
    private let log: @Sendable (String) -> Void

    /// `queued` runs after each job is written, e.g. to wake the sender rather than wait for its next poll.
    public init(store: any TripStore, devices: any DeviceRepository, now: @escaping @Sendable () -> Date,
                queued: @escaping @Sendable () -> Void = {}, log: @escaping @Sendable (String) -> Void = { _ in }) {
        self.store = store; self.devices = devices; self.now = now; self.queued = queued; self.log = log
    }

    public func offerMade(_ offer: Offer, to provider: String) async {
        do {
            guard try await !devices.devices(accountId: provider).isEmpty else { return }
            let message = OutboxMessage(id: "apns.offer.\(offer.offerId)", topic: PushJob.topic,
                                        payload: try PushJob.offer(offer, to: provider).encoded(), createdAt: now())
            try await store.transaction { tx in try await tx.enqueue(message) }
            queued()
        } catch {
            // The live stream already carried the offer; a lost push must not hold up dispatch.
            log("offer push for \(offer.offerId): not queued: \(error)")
        }
    }
}
