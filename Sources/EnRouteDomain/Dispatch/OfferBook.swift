import Foundation
import EnRouteModels

/// How an offer ended.
public enum OfferEnding: String, Sendable, CaseIterable, Codable {
    /// The provider took the trip.
    case accepted
    /// The provider said no.
    case declined
    /// Nobody answered within the time limit.
    case expired
    /// Taken back: the trip was cancelled or went elsewhere, or the provider went offline.
    case withdrawn
}

/// The live and recently ended offers: pure bookkeeping, owned and locked by the `Dispatcher`.
///
/// Offers are exclusive both ways: a trip has at most one live offer, and a provider holds at most one.
/// An offer being accepted is claimed, so that its timer or a withdrawal cannot end it underneath the accept.
struct OfferBook: Sendable {
    struct Live: Sendable {
        let offer: Offer
        let providerId: String
        var accepting = false
    }

    struct Ended: Sendable {
        let offer: Offer
        let providerId: String
        let ending: OfferEnding
        var tripId: String { offer.tripId }
    }

    /// What an accept finds.
    enum Claim: Sendable {
        /// The offer is now being accepted by its holder.
        case claimed(Live)
        /// The offer is already being accepted (a concurrent duplicate).
        case busy(tripId: String)
        /// The offer was this provider's and has ended.
        case ended(Ended)
        /// No such offer for this provider.
        case notFound
    }

    private(set) var live: [String: Live] = [:]
    private(set) var byTrip: [String: String] = [:]
    private(set) var byProvider: [String: String] = [:]
    private var ended: [String: Ended] = [:]
    private var endedOrder: [String] = []
    /// Ended offers remembered for their 409 answers.
    let memory: Int

    init(memory: Int = 10_000) { self.memory = memory }

    /// Opens `offer` for `provider`; false when the trip or the provider already has a live offer.
    mutating func open(_ offer: Offer, to provider: String) -> Bool {
        guard byTrip[offer.tripId] == nil, byProvider[provider] == nil else { return false }
        live[offer.offerId] = Live(offer: offer, providerId: provider)
        byTrip[offer.tripId] = offer.offerId
        byProvider[provider] = offer.offerId
        return true
    }

    /// Claims a live offer for its holder's accept; an offer past `expiresAt` ends as expired instead.
    mutating func claim(_ offerId: String, by provider: String, now: Date) -> Claim {
        if let offer = live[offerId], offer.providerId == provider {
            if offer.accepting { return .busy(tripId: offer.offer.tripId) }
            if now > offer.offer.expiresAt, let closed = close(offerId, .expired) {
                return .ended(Ended(offer: closed.offer, providerId: provider, ending: .expired))
            }
            live[offerId]!.accepting = true
            return .claimed(live[offerId]!)
        }
        if let past = ended[offerId], past.providerId == provider { return .ended(past) }
        return .notFound
    }

    /// Gives a claimed offer back (the accept failed for a reason unrelated to the trip).
    mutating func unclaim(_ offerId: String) { live[offerId]?.accepting = false }

    /// Ends a live offer; `unlessAccepting` leaves one that is being accepted alone. Returns the offer ended.
    mutating func close(_ offerId: String, _ ending: OfferEnding, unlessAccepting: Bool = false) -> Live? {
        guard let offer = live[offerId], !(unlessAccepting && offer.accepting) else { return nil }
        live[offerId] = nil
        byTrip[offer.offer.tripId] = nil
        byProvider[offer.providerId] = nil
        ended[offerId] = Ended(offer: offer.offer, providerId: offer.providerId, ending: ending)
        endedOrder.append(offerId)
        if endedOrder.count > memory * 2 {
            for id in endedOrder.prefix(memory) { ended[id] = nil }
            endedOrder.removeFirst(memory)
        }
        return offer
    }

    /// The live offer `provider` holds.
    func liveOffer(heldBy provider: String) -> Live? { byProvider[provider].flatMap { live[$0] } }

    /// The live offer out for `tripId`.
    func liveOffer(forTrip tripId: String) -> Live? { byTrip[tripId].flatMap { live[$0] } }

    /// How an ended offer ended, if it is still remembered.
    func ending(of offerId: String) -> Ended? { ended[offerId] }

    /// An ended offer as its store shows it, if it is still remembered.
    func record(of offerId: String) -> OfferRecord? {
        ended[offerId].map { OfferRecord(offer: $0.offer, providerId: $0.providerId, ending: $0.ending) }
    }
}
