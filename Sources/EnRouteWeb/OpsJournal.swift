public import Foundation
public import EnRouteModels
public import EnRouteDomain
public import EnRouteNotifications
import Synchronization

/// What the ops console shows of a trip beyond its record: the offers dispatch made and the pushes sent about it,
/// kept in memory for the newest `capacity` trips (the console's window on the live city, not an audit log).
public final class OpsJournal: Sendable {
    /// One offer or push, as the console lists it.
    public struct Entry: Codable, Sendable, Equatable {
        /// "offer" or "push".
        public let kind: String
        public let at: Date
        /// The offer's provider, or the push's type ("alert", "liveactivity").
        public let subject: String
        /// The offer id and its expiry, or the push's outcome.
        public let detail: String
    }

    private struct State {
        var entries: [String: [Entry]] = [:]
        var order: [String] = []
    }

    private let state = Mutex(State())
    private let capacity: Int
    private let now: @Sendable () -> Date

    /// A journal of the newest `capacity` trips' offers and pushes, stamped by `now`.
    public init(capacity: Int = 2_000, now: @escaping @Sendable () -> Date) {
        self.capacity = capacity; self.now = now
    }

    /// The trip's offers and pushes, oldest first.
    public func entries(tripId: String) -> [Entry] { state.withLock { $0.entries[tripId] ?? [] } }

    func record(_ entry: Entry, tripId: String) {
        state.withLock { s in
            if s.entries[tripId] == nil {
                s.order.append(tripId)
                if s.order.count > capacity { s.entries[s.order.removeFirst()] = nil }
            }
            s.entries[tripId, default: []].append(entry)
            if s.entries[tripId]!.count > 200 { s.entries[tripId]!.removeFirst() }
        }
    }

    /// `observer` with every offer also written here.
    public func observing(_ observer: any OfferObserver) -> any OfferObserver {
        JournalingOfferObserver(journal: self, inner: observer)
    }

    /// `gateway` with every push that names a trip (an order update, an offer) also written here, with its outcome.
    public func recording(_ gateway: any PushGateway) -> any PushGateway {
        JournalingPushGateway(journal: self, inner: gateway)
    }

    fileprivate func offerMade(_ offer: Offer, to provider: String) {
        record(
            Entry(
                kind: "offer", at: now(), subject: provider,
                detail: "offer \(offer.offerId), expires \(ISO8601DateFormatter().string(from: offer.expiresAt))"),
            tripId: offer.tripId)
    }

    fileprivate func pushed(_ push: APNsPush, outcome: PushOutcome) {
        guard let tripId = Self.tripId(ofPayload: push.payload) else { return }
        let result: String =
            switch outcome {
            case .delivered: "delivered"
            case .tokenInvalid: "token invalid"
            case .rejected(let reason): "rejected: \(reason)"
            case .retry(_, let reason): "to retry: \(reason)"
            }
        record(Entry(kind: "push", at: now(), subject: push.pushType.rawValue, detail: result), tripId: tripId)
    }

    /// The trip a push is about: its `tripId`, or the order its `route` opens (`orders/{id}`).
    static func tripId(ofPayload payload: [UInt8]) -> String? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any] else { return nil }
        if let id = object["tripId"] as? String { return id }
        if let route = object["route"] as? String, route.hasPrefix("orders/") { return String(route.dropFirst(7)) }
        return nil
    }
}

private struct JournalingOfferObserver: OfferObserver {
    let journal: OpsJournal
    let inner: any OfferObserver
    func offerMade(_ offer: Offer, to provider: String) async {
        journal.offerMade(offer, to: provider)
        await inner.offerMade(offer, to: provider)
    }
}

private struct JournalingPushGateway: PushGateway {
    let journal: OpsJournal
    let inner: any PushGateway
    func send(_ push: APNsPush) async -> PushOutcome {
        let outcome = await inner.send(push)
        journal.pushed(push, outcome: outcome)
        return outcome
    }
}
