public import Foundation
public import EnRouteModels
import Synchronization

/// One offer as its store holds it: live, being accepted, or ended.
public struct OfferRecord: Sendable, Equatable {
    public let offer: Offer
    public let providerId: String
    /// True while its holder's accept is moving the trip.
    public var accepting: Bool
    /// How it ended; nil while it is live or being accepted.
    public var ending: OfferEnding?

    public init(offer: Offer, providerId: String, accepting: Bool = false, ending: OfferEnding? = nil) {
        self.offer = offer; self.providerId = providerId; self.accepting = accepting; self.ending = ending
    }
}

/// What an accept finds when it claims an offer.
public enum OfferClaim: Sendable, Equatable {
    /// The offer is now being accepted by its holder.
    case claimed(OfferRecord)
    /// The offer is already being accepted (a concurrent duplicate).
    case busy(tripId: String)
    /// The offer was this provider's and has ended; `justExpired` when this claim found it past its time and ended it.
    case ended(OfferRecord, justExpired: Bool)
    /// No such offer for this provider.
    case notFound
}

/// Where offers live, shared by every node of a deployment: a trip has at most one live offer, a provider holds at most
/// one, and a trip has at most one accepted offer. An accept claims the offer with one conditional write (live and not
/// past its time, to being accepted), so of any number of accepts sent to any number of nodes one wins; the expiry
/// timer and a withdrawal leave a claimed offer alone.
///
/// Reads answer nil when the store cannot be reached; writes throw.
public protocol OfferStore: Sendable {
    /// Opens `offer` for `provider`; false when the trip no longer waits for a provider (read in the same transaction),
    /// or the trip or the provider already has a live offer. An offer of either past its time is ended as expired first
    /// (its search may have died with its node).
    func open(_ offer: Offer, to provider: String, now: Date) async throws -> Bool
    /// Claims the live offer for its holder's accept; one past its `expiresAt` ends as expired instead.
    func claim(_ offerId: String, by provider: String, now: Date) async throws -> OfferClaim
    /// Gives a claimed offer back (the accept failed for a reason unrelated to the trip).
    func unclaim(_ offerId: String) async throws
    /// Ends a live offer; `unlessAccepting` leaves one that is being accepted alone. Returns the offer as it was.
    func close(_ offerId: String, _ ending: OfferEnding, unlessAccepting: Bool) async throws -> OfferRecord?
    /// The offer with this id, live or ended, while it is remembered.
    func offer(id: String) throws -> OfferRecord?
    /// The live offer `provider` holds.
    func liveOffer(heldBy provider: String) -> OfferRecord?
    /// The live offer out for `tripId`.
    func liveOffer(forTrip tripId: String) -> OfferRecord?
    /// Every provider holding a live offer now.
    func holders() -> Set<String>
    /// Forgets offers that ended before `cutoff`.
    func purge(endedBefore cutoff: Date) async throws

    /// Takes or keeps the right to run the trip's search for `node` until `until`: true when the search is free, its
    /// lease ran out by `now`, or `node` holds it already. A node that lost its lease (stopped past it) learns so here.
    func claimSearch(_ tripId: String, node: String, until: Date, now: Date) async throws -> Bool
    /// Extends every search lease `node` holds to `until` (its heartbeat).
    func renewSearches(node: String, until: Date) async throws
    /// The trips whose search another node holds on a lease that has not run out by `now`: what `node`'s heartbeat
    /// need not try to take over (one read, instead of a claim per trip).
    func searchesHeldElsewhere(than node: String, now: Date) async throws -> Set<String>
    /// Gives up `node`'s lease of the trip's search (the search ended, or the node is stopping).
    func releaseSearch(_ tripId: String, node: String) async throws
}

/// Offers in this process's memory (one node, tests): the `OfferBook` under a lock.
public final class InMemoryOfferStore: OfferStore {
    private let book = Mutex(OfferBook())
    private let leases = Mutex<[String: (node: String, until: Date)]>([:])
    private let tripWaiting: @Sendable (String) -> Bool

    /// `tripWaiting` tells whether a trip still waits for a provider; it is asked under the book's lock as an offer
    /// opens.
    public init(tripWaiting: @escaping @Sendable (String) -> Bool = { _ in true }) { self.tripWaiting = tripWaiting }

    public func open(_ offer: Offer, to provider: String, now: Date) async throws -> Bool {
        book.withLock { b in
            guard tripWaiting(offer.tripId) else { return false }
            for stale in [b.liveOffer(forTrip: offer.tripId), b.liveOffer(heldBy: provider)].compactMap({ $0 })
            where !stale.accepting && now > stale.offer.expiresAt {
                _ = b.close(stale.offer.offerId, .expired)
            }
            return b.open(offer, to: provider)
        }
    }

    public func claim(_ offerId: String, by provider: String, now: Date) async throws -> OfferClaim {
        book.withLock { b in
            let before = b.live[offerId]
            switch b.claim(offerId, by: provider, now: now) {
            case .claimed(let live): return .claimed(OfferRecord(live))
            case .busy(let tripId): return .busy(tripId: tripId)
            case .notFound: return .notFound
            case .ended(let past):
                let record =
                    before.map { OfferRecord(offer: $0.offer, providerId: $0.providerId, ending: past.ending) }
                    ?? b.record(of: offerId)
                guard let record else { return .notFound }
                return .ended(record, justExpired: before != nil && past.ending == .expired)
            }
        }
    }

    public func unclaim(_ offerId: String) async throws { book.withLock { $0.unclaim(offerId) } }

    public func close(_ offerId: String, _ ending: OfferEnding, unlessAccepting: Bool) async throws -> OfferRecord? {
        book.withLock { $0.close(offerId, ending, unlessAccepting: unlessAccepting).map(OfferRecord.init) }
    }

    public func offer(id: String) -> OfferRecord? {
        book.withLock { $0.live[id].map(OfferRecord.init) ?? $0.record(of: id) }
    }
    public func liveOffer(heldBy provider: String) -> OfferRecord? {
        book.withLock { $0.liveOffer(heldBy: provider).map(OfferRecord.init) }
    }
    public func liveOffer(forTrip tripId: String) -> OfferRecord? {
        book.withLock { $0.liveOffer(forTrip: tripId).map(OfferRecord.init) }
    }
    public func holders() -> Set<String> { book.withLock { Set($0.byProvider.keys) } }
    /// The book remembers a bounded number of ended offers by itself.
    public func purge(endedBefore cutoff: Date) async throws {}

    public func claimSearch(_ tripId: String, node: String, until: Date, now: Date) async throws -> Bool {
        leases.withLock { all in
            if let held = all[tripId], held.node != node, held.until >= now { return false }
            all[tripId] = (node, until)
            return true
        }
    }

    public func renewSearches(node: String, until: Date) async throws {
        leases.withLock { all in for (trip, held) in all where held.node == node { all[trip] = (node, until) } }
    }

    public func searchesHeldElsewhere(than node: String, now: Date) async throws -> Set<String> {
        leases.withLock { all in Set(all.filter { $0.value.node != node && $0.value.until >= now }.keys) }
    }

    public func releaseSearch(_ tripId: String, node: String) async throws {
        leases.withLock { all in if all[tripId]?.node == node { all[tripId] = nil } }
    }
}

extension OfferRecord {
    init(_ live: OfferBook.Live) {
        self.init(offer: live.offer, providerId: live.providerId, accepting: live.accepting)
    }
}

extension OfferRecord {
    /// The states an open offer is in, as a store's `state` column holds them.
    public static let openStates = ["live", "accepting"]

    /// The record's state as a store's column holds it: `live`, `accepting`, or how it ended.
    public var storedState: String { ending?.rawValue ?? (accepting ? "accepting" : "live") }

    /// A record from a store's row; `returned` is an accepted offer whose trip its provider later gave back.
    public init?(offer: Offer, providerId: String, storedState: String) {
        switch storedState {
        case "live": self.init(offer: offer, providerId: providerId)
        case "accepting": self.init(offer: offer, providerId: providerId, accepting: true)
        case "returned": self.init(offer: offer, providerId: providerId, ending: .accepted)
        default:
            guard let ending = OfferEnding(rawValue: storedState) else { return nil }
            self.init(offer: offer, providerId: providerId, ending: ending)
        }
    }
}
