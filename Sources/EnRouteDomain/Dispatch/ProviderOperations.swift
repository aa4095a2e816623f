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

    /// Everything over `service`; dispatch waits for `dispatcher.start()`.
    ///
    /// - Parameters:
    ///   - clock: offer time limits and search deadlines sleep on it.
    ///   - ids: offer ids.
    ///   - offers: hears of each offer after the provider's live stream (the platform push).
    ///   - jitterSeed: the secret behind the nearby map's per-provider offsets.
    public init(service: TripService, metrics: any MetricsSink, clock: any Clock<Duration>, paths: any PathStore = InMemoryPathStore(),
                policy: DispatchPolicy = DispatchPolicy(), plausibility: FixPlausibilityPolicy = FixPlausibilityPolicy(),
                ranking: any CandidateRanking = StraightLineRanking(), fixLifetime: TimeInterval = 120,
                ids: any IDGenerator, offers: (any OfferObserver)? = nil, jitterSeed: UInt64, speeds: (any RoadSpeedFeedback)? = nil) {
        let now: @Sendable () -> Date = { service.currentTime() }
        let presence = ProviderPresence(fixLifetime: fixLifetime, cities: service.cities, now: now)
        let events = ProviderEventHub()
        let dispatcher = Dispatcher(service: service, presence: presence, events: events, offers: offers, ranking: ranking, policy: policy,
                                    clock: clock, ids: ids, metrics: metrics, now: now)
        self.presence = presence
        self.events = events
        self.dispatcher = dispatcher
        self.paths = paths
        self.service = service
        self.wire = WireMapping(directory: service.directory, rating: { [weak service] in service?.averageRating(provider: $0) })
        self.coarsening = NearbyCoarsening(seed: jitterSeed)
        ingest = LocationIngest(service: service, presence: presence, paths: paths, policy: plausibility, metrics: metrics,
                                supplyChanged: { dispatcher.supplyChanged() }, speeds: speeds, now: now)
        service.onChange { [events, wire] old, new in
            // Each provider on the trip, before or after the change, sees it (a customer's cancel, a reassignment).
            for provider in Set([old?.providerId, new.providerId].compactMap { $0 }) {
                events.send(LiveEventName.tripUpdated.rawValue, wire.snapshot(new), to: provider)
            }
        }
    }

    /// Searches hold the dispatcher until they end, so when the provider side goes away its searches stop.
    deinit { dispatcher.stop() }

    /// Goes online or offline; going offline withdraws the provider's live offer.
    public func setAvailability(_ request: AvailabilityRequest, provider: String) -> AvailabilityState {
        let findable = presence.setOnline(provider, request.online, position: request.position)
        if request.online {
            if findable { dispatcher.supplyChanged() }
        } else {
            dispatcher.providerWentOffline(provider)
        }
        return AvailabilityState(online: request.online)
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
