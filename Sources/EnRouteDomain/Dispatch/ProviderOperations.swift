public import Foundation
public import EnRouteModels
public import EnRouteLogging

/// The provider side of the backend wired together: presence, location ingest, dispatch, the providers' live streams
/// and the nearby map (`GET /v1/drivers/nearby`).
public final class ProviderOperations: Sendable {
    /// Who is online and where: this node's own `ProviderPresence`, or the store every node of a deployment shares.
    public let presence: any ProviderLocations
    public let ingest: LocationIngest
    public let dispatcher: Dispatcher
    public let events: ProviderEventHub
    public let paths: any PathStore
    public let coarsening: NearbyCoarsening
    /// At most this many markers on the nearby map.
    public let nearbyLimit = 20
    /// The nearby map looks this far, in metres.
    public let nearbyRadius = 3_000.0
    /// How long a provider's latest position counts.
    public let fixLifetime: TimeInterval
    private let service: TripService
    private let wire: WireMapping
    private let peers: (any PeerChannel)?
    private let metrics: any MetricsSink
    private let log: Logger
    /// A provider became findable at a position: searches waiting for supply look again, here and on the other nodes.
    private let wake: @Sendable (Coordinate) -> Void

    /// Everything over `service`; dispatch waits for `dispatcher.start()`.
    ///
    /// - Parameters:
    ///   - clock: offer time limits and search deadlines sleep on it.
    /// - locations: who is online and where; nil: a `ProviderPresence` of this node's own (`fixLifetime`, the service's
    ///     cities and clock). The nodes of a deployment share one (Redis), so each finds the providers of every other.
    ///   - ids: offer ids.
    ///   - offers: hears of each offer after the provider's live stream (the platform push).
    ///   - jitterSeed: the secret behind the nearby map's per-provider offsets.
    ///   - book: where offers live (shared by every node of a deployment).
    ///   - peers: the other nodes (supply changes, provider events, offer endings); nil on a node of its own.
    public init(
        service: TripService, metrics: any MetricsSink, clock: any Clock<Duration>,
        paths: any PathStore = InMemoryPathStore(),
        policy: DispatchPolicy = DispatchPolicy(), plausibility: FixPlausibilityPolicy = FixPlausibilityPolicy(),
        ranking: any CandidateRanking = StraightLineRanking(), fixLifetime: TimeInterval = 120,
        locations: (any ProviderLocations)? = nil,
        ids: any IDGenerator, offers: (any OfferObserver)? = nil, book: any OfferStore = InMemoryOfferStore(),
        peers: (any PeerChannel)? = nil, jitterSeed: UInt64, speeds: (any RoadSpeedFeedback)? = nil,
        log: Logger = .discard
    ) {
        let now: @Sendable () -> Date = { service.currentTime() }
        let presence = locations ?? ProviderPresence(fixLifetime: fixLifetime, cities: service.cities, now: now)
        let events = ProviderEventHub()
        let dispatcher = Dispatcher(
            service: service, presence: presence, events: events, offers: offers, book: book, peers: peers,
            ranking: ranking, policy: policy, clock: clock, ids: ids, metrics: metrics, log: log, now: now)
        self.peers = peers
        self.fixLifetime = fixLifetime
        self.presence = presence
        self.events = events
        self.dispatcher = dispatcher
        self.paths = paths
        self.service = service
        self.metrics = metrics
        self.log = log
        let wake = Self.supplyChanged(dispatcher, peers: peers, cities: service.cities)
        self.wake = wake
        self.wire = WireMapping(
            directory: service.directory, rating: { [weak service] in service?.averageRating(provider: $0) })
        self.coarsening = NearbyCoarsening(seed: jitterSeed)
        ingest = LocationIngest(
            service: service, presence: presence, paths: paths, policy: plausibility, metrics: metrics,
            supplyChanged: wake,
            speeds: speeds, log: log, now: now)
        service.onChange { [events, wire] old, new in
            // Each provider on the trip, before or after the change, sees it (a customer's cancel, a reassignment).
            for provider in Set([old?.providerId, new.providerId].compactMap { $0 }) {
                let view = provider == new.providerId ? wire.courierSnapshot(new) : wire.snapshot(new)
                events.send(LiveEventName.tripUpdated.rawValue, view, to: provider)
            }
        }
    }

    /// What happens when a provider becomes findable at a position: searches waiting for supply look again, here and,
    /// on a node of several, on the others (who find the provider in the locations they share).
    private static func supplyChanged(
        _ dispatcher: Dispatcher, peers: (any PeerChannel)?, cities: Cities
    ) -> @Sendable (Coordinate) -> Void {
        { position in
            dispatcher.supplyChanged()
            peers?.share(.supplyChanged, city: cities.city(containing: position) ?? Cities.defaultName)
        }
    }

    /// Searches hold the dispatcher until they end, so when the provider side goes away its searches stop.
    deinit { dispatcher.stop() }

    /// Goes online or offline; going offline withdraws the provider's live offer. Throws `ProviderLocationsUnavailable`
    /// when the provider locations cannot be written (going offline still withdraws the offer).
    public func setAvailability(_ request: AvailabilityRequest, provider: String) async throws -> AvailabilityState {
        let findable: Bool
        do {
            findable = try await presence.setOnline(provider, request.online, position: request.position)
        } catch {
            if !request.online { await dispatcher.providerWentOffline(provider) }
            throw unavailable("availability", error)
        }
        if request.online {
            // Findable means a usable position in a city: the one given, or the one kept from before.
            var position = request.position
            if findable, position == nil { position = try? await presence.position(of: provider)?.coordinate }
            if findable, let position { wake(position) }
        } else {
            await dispatcher.providerWentOffline(provider)
        }
        return AvailabilityState(online: request.online)
    }

    /// Applies what another node tells the provider side: supply changed there, an event for a provider's streams open
    /// here, an offer that ended there. Positions are not carried: every node reads the locations they share.
    public func receive(_ message: LiveMessage) {
        switch message {
        case .supplyChanged:
            dispatcher.supplyChanged()
        case .providerEvent(let provider, let name, let data):
            events.deliver(name, data: data, to: provider)
        case .offerEnded(let tripId, let offerId, let ending):
            dispatcher.offerEndedElsewhere(tripId: tripId, offerId: offerId, ending: ending)
        case .trip, .fixes, .relayDue:
            break
        }
    }

    /// The events a provider's stream opens with: the live offer, then each active trip.
    public func resync(provider: String) -> [ProviderEvent] {
        var out: [ProviderEvent] = []
        if let offer = dispatcher.liveOffer(heldBy: provider) {
            out.append(events.event(LiveEventName.offer.rawValue, offer))
        }
        for trip in service.activeTrips(provider: provider).reversed() {
            out.append(events.event(LiveEventName.tripUpdated.rawValue, wire.courierSnapshot(trip)))
        }
        return out
    }

    /// Coarse markers of online providers with a fresh position near `center`: at most 20, nearest first. Throws
    /// `ProviderLocationsUnavailable` when the provider locations cannot be read.
    public func nearby(_ center: Coordinate) async throws -> [Coordinate] {
        do {
            return try await presence.nearest(to: center, limit: nearbyLimit, within: nearbyRadius) { _ in true }
                .map { coarsening.marker(for: $0.id, at: $0.coordinate) }
        } catch {
            throw unavailable("nearby", error)
        }
    }

    /// Counts and logs a failed call to the provider locations, and says so as `ProviderLocationsUnavailable`.
    private func unavailable(_ call: String, _ error: any Error) -> ProviderLocationsUnavailable {
        metrics.increment(
            "enroute_presence_failures_total", labels: ["call": call],
            help: "Calls to the provider locations that failed, by caller.")
        log.warning("\(call): the provider locations failed: \(error)")
        return error as? ProviderLocationsUnavailable ?? ProviderLocationsUnavailable("\(error)")
    }

    /// Supply and demand for the zones' count: the pickups of the rides waiting for a provider, and where each online
    /// provider with no trip and a fresh position is.
    public func zoneCounts() async throws -> (open: [Coordinate], idle: [Coordinate]) {
        let online = try await presence.onlineProviders()
        let service = self.service
        let fresh = service.currentTime().addingTimeInterval(-fixLifetime)
        let idle = online.compactMap { id, position -> Coordinate? in
            guard let position, position.recordedAt >= fresh, service.isIdle(provider: id) else { return nil }
            return position.coordinate
        }
        return (service.openPickups(), idle)
    }

    /// Where the nearest `limit` online providers with no trip are, within `radius` metres of `point` (none when
    /// presence cannot be read).
    public func idleProviders(near point: Coordinate, limit: Int, within radius: Double) async -> [Coordinate] {
        let service = self.service
        let hits = try? await presence.nearest(to: point, limit: limit, within: radius) { service.isIdle(provider: $0) }
        return hits?.map(\.coordinate) ?? []
    }
}
