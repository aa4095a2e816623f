public import Foundation
public import EnRouteModels

/// The provider side of the backend wired together: presence, location ingest, dispatch, the
/// providers' live streams and the nearby map (seed 004 §44.4, seed 002 `GET /v1/drivers/nearby`).
public final class ProviderOperations: Sendable {
    public let presence: ProviderPresence
    public let ingest: LocationIngest
    public let dispatcher: Dispatcher
    public let events: ProviderEventHub
    public let paths: any PathStore
    public let coarsening: NearbyCoarsening
    /// At most this many markers on the nearby map.
    public let nearbyLimit = 20
    /// The nearby map looks this far, in metres.
    public let nearbyRadius = 3_000.0
    private let service: TripService
    private let wire: WireMapping
    private let peers: (any PeerChannel)?

    /// Everything over `service`; dispatch waits for `dispatcher.start()`.
    ///
    /// - Parameters:
    ///   - clock: offer time limits and search deadlines sleep on it.
    ///   - ids: offer ids.
    ///   - offers: hears of each offer after the provider's live stream (the platform push).
    ///   - jitterSeed: the secret behind the nearby map's per-provider offsets.
    ///   - book: where offers live (shared by every node of a deployment).
    ///   - peers: the other nodes (presence, provider events, offer endings); nil on a node of its own.
    public init(service: TripService, metrics: any MetricsSink, clock: any Clock<Duration>, paths: any PathStore = InMemoryPathStore(),
                policy: DispatchPolicy = DispatchPolicy(), plausibility: FixPlausibilityPolicy = FixPlausibilityPolicy(),
                ranking: any CandidateRanking = StraightLineRanking(), fixLifetime: TimeInterval = 120,
                ids: any IDGenerator, offers: (any OfferObserver)? = nil, book: any OfferStore = InMemoryOfferStore(),
                peers: (any PeerChannel)? = nil, jitterSeed: UInt64, speeds: (any RoadSpeedFeedback)? = nil) {
        let now: @Sendable () -> Date = { service.currentTime() }
        let presence = ProviderPresence(fixLifetime: fixLifetime, cities: service.cities, now: now)
        let events = ProviderEventHub()
        let dispatcher = Dispatcher(service: service, presence: presence, events: events, offers: offers, book: book, peers: peers,
                                    ranking: ranking, policy: policy, clock: clock, ids: ids, metrics: metrics, now: now)
        self.peers = peers
        self.presence = presence
        self.events = events
        self.dispatcher = dispatcher
        self.paths = paths
        self.service = service
        self.wire = WireMapping(directory: service.directory, rating: { [weak service] in service?.averageRating(provider: $0) })
        self.coarsening = NearbyCoarsening(seed: jitterSeed)
        ingest = LocationIngest(service: service, presence: presence, paths: paths, policy: plausibility, metrics: metrics,
                                supplyChanged: { dispatcher.supplyChanged() }, positionKept: Self.sharing(to: peers, cities: service.cities),
                                speeds: speeds, now: now)
        service.onChange { [events, wire] old, new in
            // Each provider on the trip, before or after the change, sees it (a customer's cancel, a reassignment).
            for provider in Set([old?.providerId, new.providerId].compactMap { $0 }) {
                events.send(LiveEventName.tripUpdated.rawValue, wire.snapshot(new), to: provider)
            }
        }
    }

    /// What the ingest does with a batch's newest kept fix on a node of several: fixes on a trip reach the other nodes
    /// with the trip's fan-out, the rest go as the provider's presence.
    private static func sharing(to peers: (any PeerChannel)?, cities: Cities) -> (@Sendable (String, LocationFix, Bool) -> Void)? {
        guard let peers else { return nil }
        return { provider, fix, onTrip in
            guard !onTrip else { return }
            let message = LiveMessage.presence(provider: provider, online: nil, position: fix.coordinate, recordedAt: fix.recordedAt)
            peers.share(message, city: cities.city(containing: fix.coordinate) ?? Cities.defaultName)
        }
    }

    /// Searches hold the dispatcher until they end, so when the provider side goes away its searches stop.
    deinit { dispatcher.stop() }

    /// Goes online or offline; going offline withdraws the provider's live offer.
    public func setAvailability(_ request: AvailabilityRequest, provider: String) async -> AvailabilityState {
        let findable = presence.setOnline(provider, request.online, position: request.position)
        if let peers {
            let city = request.position.flatMap { service.cities.city(containing: $0) } ?? Cities.defaultName
            peers.share(.presence(provider: provider, online: request.online, position: request.position, recordedAt: service.currentTime()),
                        city: city)
        }
        if request.online {
            if findable { dispatcher.supplyChanged() }
        } else {
            await dispatcher.providerWentOffline(provider)
        }
        return AvailabilityState(online: request.online)
    }

    /// Applies what another node tells the provider side: a provider's presence or position, an event for a provider's
    /// streams open here, an offer that ended there.
    public func receive(_ message: LiveMessage) {
        switch message {
        case .presence(let provider, let online, let position, let recordedAt):
            let findable: Bool
            if let online {
                findable = presence.setOnline(provider, online, position: position)
            } else if let position {
                findable = presence.update(provider, to: position, recordedAt: recordedAt)
            } else {
                findable = false
            }
            if findable { dispatcher.supplyChanged() }
        case .fixes(let provider, let fixes):
            if let newest = fixes.last, presence.update(provider, to: newest.coordinate, recordedAt: newest.recordedAt) {
                dispatcher.supplyChanged()
            }
        case .providerEvent(let provider, let name, let data):
            events.deliver(name, data: data, to: provider)
        case .offerEnded(let tripId, let offerId, let ending):
            dispatcher.offerEndedElsewhere(tripId: tripId, offerId: offerId, ending: ending)
        case .trip, .relayDue:
            break
        }
    }

    /// The events a provider's stream opens with: the live offer, then each active trip.
    public func resync(provider: String) -> [ProviderEvent] {
        var out: [ProviderEvent] = []
        if let offer = dispatcher.liveOffer(heldBy: provider) { out.append(events.event(LiveEventName.offer.rawValue, offer)) }
        for trip in service.activeTrips(provider: provider).reversed() { out.append(events.event(LiveEventName.tripUpdated.rawValue, wire.snapshot(trip))) }
        return out
    }

    /// Coarse markers of online providers with a fresh position near `center`: at most 20, nearest first.
    public func nearby(_ center: Coordinate) -> [Coordinate] {
        presence.nearest(to: center, limit: nearbyLimit, within: nearbyRadius).map { coarsening.marker(for: $0.id, at: $0.coordinate) }
    }
}
