public import Foundation
public import EnRouteModels
import Synchronization
public import EnRouteLogging

/// No live or recent offer with this id was ever this provider's.
public struct OfferNotFound: Error, Sendable, Equatable {}

/// Matching and dispatch: for each trip that needs a provider, offers it to one candidate at a time with a time limit,
/// moving on when an offer is declined, runs out or is withdrawn.
///
/// Each search is a task that reacts to signals (offer ended, trip changed, supply changed, timer),
/// so that a decline moves on at once and a cancelled trip stops its search at once. A ride whose
/// search makes `maxCandidates` offers or lasts `searchLimit` without an accept ends in
/// `noDriversFound`; a delivery stays placed or picking, and its search starts over after
/// `deliveryRetry`. Which provider holds a trip is decided by the trip's state machine in one
/// transaction, so two providers never both hold it, whatever the offers say.
public final class Dispatcher: Sendable {
    enum Signal: Sendable {
        case offerEnded(offerId: String, OfferEnding)
        case tripChanged
        case supplyChanged
        case timer(UInt64)
    }

    struct Search {
        let signals: AsyncStream<Signal>.Continuation
        var task: Task<Void, Never>?
        var waitingForSupply = false
        /// The last look found nobody to ask.
        var foundNobody = false
    }

    struct State {
        var searches: [String: Search] = [:]
        /// Providers who gave a trip back are not asked for it again while it waits.
        var gaveUp: [String: Set<String>] = [:]
        var started = false
        /// A node of several: renews this node's search leases and takes over searches whose node died.
        var watch: Task<Void, Never>?
        /// In batched matching, the searches waiting for their city's window to close.
        var windows: [String: [WaitingLook]] = [:]
        /// Callers of `looksWaiting(atLeast:)` not yet answered.
        var windowWatchers: [(count: Int, resume: CheckedContinuation<Void, Never>)] = []
    }

    /// How the backend appears in the change log when dispatch gives up on a ride.
    public static let account = Account(id: "dispatch", role: .backend)

    public let policy: DispatchPolicy
    let service: TripService
    let presence: any ProviderLocations
    let events: ProviderEventHub
    let offers: (any OfferObserver)?
    let book: any OfferStore
    let peers: (any PeerChannel)?
    /// This node's name when it is one of several: each search is then leased in `book`, so one node runs it.
    let node: String?
    let ranking: any CandidateRanking
    let clock: any Clock<Duration>
    let ids: any IDGenerator
    let metrics: any MetricsSink
    let log: Logger
    let now: @Sendable () -> Date
    let state = Mutex(State())
    let timers = Atomic<UInt64>(0)

    /// `offers` hears of each offer after the live stream (the platform push); nil sends offers on the stream only.
    /// `book` holds the offers (shared by every node of a deployment); `peers` carries offer events and endings to the
    /// other nodes, nil on a node of its own. `presence` is this node's own, or the store every node shares.
    public init(
        service: TripService, presence: any ProviderLocations, events: ProviderEventHub,
        offers: (any OfferObserver)? = nil,
        book: any OfferStore = InMemoryOfferStore(), peers: (any PeerChannel)? = nil,
        ranking: any CandidateRanking = StraightLineRanking(), policy: DispatchPolicy = DispatchPolicy(),
        clock: any Clock<Duration>,
        ids: any IDGenerator, metrics: any MetricsSink, log: Logger = .discard,
        now: @escaping @Sendable () -> Date
    ) {
        self.service = service; self.presence = presence; self.events = events; self.offers = offers;
        self.ranking = ranking; self.policy = policy
        self.book = book; self.peers = peers; self.node = service.node
        self.clock = clock; self.ids = ids; self.metrics = metrics; self.log = log; self.now = now
    }

    // MARK: - Lifecycle

    /// Starts dispatching: every trip created or handed back from now on, and every stored trip that
    /// still needs a provider (after a restart). Calling it again does nothing.
    public func start() throws {
        let first = state.withLock { s -> Bool in
            defer { s.started = true }
            return !s.started
        }
        guard first else { return }
        service.onCommit { [weak self] old, new in self?.tripCommitted(from: old, to: new) }
        // A search hears of every version, also those committed on other nodes: an offer accepted elsewhere may end the
        // search (its `offerEnded`) before the version saying so arrives, and the search begun again must see it.
        service.onChange { [weak self] _, new in self?.tripSeen(new) }
        for trip in try service.store.activeTrips() where Self.needsProvider(trip) { begin(trip.id) }
        if node != nil {
            let clock = self.clock, interval = policy.takeoverInterval
            let watch = Task { [weak self] in
                while !Task.isCancelled {
                    do { try await Self.sleep(clock, interval) } catch { return }
                    guard let self else { return }
                    await self.keepLeases()
                }
            }
            state.withLock { $0.watch = watch }
        }
    }

    /// Stops every search (shutdown); live offers stay in the book and simply run out.
    public func stop() {
        let (searches, watch) = state.withLock { s -> ([String: Search], Task<Void, Never>?) in
            s.started = false
            defer { s.searches = [:]; s.watch = nil }
            return (s.searches, s.watch)
        }
        watch?.cancel()
        for search in searches.values { search.signals.finish(); search.task?.cancel() }
        // Stopping hands this node's searches over at once: another node's next look takes them.
        if let node, !searches.isEmpty {
            let book = self.book
            Task { for tripId in searches.keys { try? await book.releaseSearch(tripId, node: node) } }
        }
    }

    // MARK: - Leases (a node of several)

    /// Takes or keeps this node's lease of the trip's search; true on a node of its own.
    func leaseSearch(_ tripId: String) async -> Bool {
        guard let node else { return true }
        let at = now()
        return
            (try? await book.claimSearch(
                tripId, node: node, until: at.addingTimeInterval(Self.seconds(policy.searchLease)), now: at)) == true
    }

    /// The heartbeat: renews this node's leases, then takes over the searches of trips still waiting whose node stopped
    /// renewing (it died, or was stopped past its lease).
    func keepLeases() async {
        guard let node else { return }
        let at = now()
        try? await book.renewSearches(node: node, until: at.addingTimeInterval(Self.seconds(policy.searchLease)))
        guard let waiting = try? service.store.activeTrips().filter(Self.needsProvider) else { return }
        // Searches other nodes hold and keep renewing are theirs: one read, not a claim attempt per trip.
        guard let elsewhere = try? await book.searchesHeldElsewhere(than: node, now: at) else { return }
        for trip in waiting
        where !elsewhere.contains(trip.id) && state.withLock({ $0.started && $0.searches[trip.id] == nil }) {
            if await leaseSearch(trip.id) {
                metrics.increment(
                    "enroute_dispatch_takeovers_total",
                    help: "Searches this node took over from a node that stopped renewing its lease.")
                service.absorb(trip)
                begin(trip.id, leased: true)
            }
        }
    }

    /// How many searches are running.
    public var activeSearches: Int { state.withLock { $0.searches.count } }

    /// How many searches looked, found nobody to ask, and wait for a provider to become findable.
    public var searchesFindingNobody: Int { state.withLock { $0.searches.values.count(where: \.foundNobody) } }

    // MARK: - What providers do

    /// The provider's live offer, if they hold one.
    public func liveOffer(heldBy provider: String) -> Offer? { book.liveOffer(heldBy: provider)?.offer }

    /// The live offer out for a trip, if any.
    public func liveOffer(forTrip tripId: String) -> Offer? { book.liveOffer(forTrip: tripId)?.offer }

    /// Returns once the trip's running search, if any, has ended.
    public func searchEnded(_ tripId: String) async {
        let task = state.withLock { $0.searches[tripId]?.task }
        await task?.value
    }

    /// Accepts an offer now (never queued): the trip, with the provider assigned.
    ///
    /// Throws `OfferNotFound` when the offer was never this provider's, and `TripError.refused` with the
    /// real trip after it expired, was declined or withdrawn, or the trip went to someone else.
    public func accept(offerId: String, by provider: String) async throws -> TripRecord {
        switch try await book.claim(offerId, by: provider, now: now()) {
        case .notFound:
            throw OfferNotFound()
        case .busy(let tripId):
            throw TripError.refused(MoveRefusal("This offer is already being accepted."), try current(tripId))
        case .ended(let past, let justExpired):
            if justExpired { ended(past, .expired, notify: true) }
            let trip = try current(past.offer.tripId)
            // A retried accept of an offer that was accepted answers as the first did.
            if past.ending == .accepted, trip.providerId == provider, trip.status.isActive { return trip }
            throw TripError.refused(MoveRefusal(Self.explain(past.ending ?? .withdrawn)), trip)
        case .claimed(let live):
            do {
                let trip =
                    if let stops = live.offer.stops {
                        try await service.assignStacked(live.offer.tripId, to: provider, stops: stops)
                    } else {
                        try await service.move(
                            live.offer.tripId, .assignProvider(provider), by: Account(id: provider, role: .provider))
                    }
                await finish(offerId, .accepted)
                return trip
            } catch let error as TripError {
                // The trip was cancelled or assigned by ops meanwhile: the offer is over, and its holder
                // learns the trip's real state (the move hides a trip that went to someone else).
                await finish(offerId, .withdrawn)
                if case .notFound = error, let trip = try? current(live.offer.tripId) {
                    throw TripError.refused(MoveRefusal(Self.explain(.withdrawn)), trip)
                }
                throw error
            } catch {
                try? await book.unclaim(offerId)
                throw error
            }
        }
    }

    /// Declines an offer; dispatch moves to the next candidate at once. Declining an ended offer does nothing.
    public func decline(offerId: String, by provider: String) async throws {
        guard let record = try book.offer(id: offerId), record.providerId == provider else { throw OfferNotFound() }
        guard record.ending == nil, let closed = try await book.close(offerId, .declined, unlessAccepting: true) else {
            return
        }
        ended(closed, .declined, notify: false)
    }

    /// How `POST /v1/provider/trips/{id}/accept` should take a trip for `provider`.
    public enum TripAccept: Sendable, Equatable {
        /// The provider holds the trip's live offer: accept that.
        case offer(String)
        /// The provider holds no live offer of the trip: nothing to accept (a provider takes only what
        /// dispatch offered them; ops can assign a trip directly).
        case notOffered
    }

    /// Whether `provider` holds the live offer of `tripId`, which a direct accept then takes.
    public func tripAccept(_ tripId: String, by provider: String) -> TripAccept {
        guard let live = book.liveOffer(forTrip: tripId), live.providerId == provider else { return .notOffered }
        return .offer(live.offer.offerId)
    }

    /// The provider went offline: their live offer is withdrawn and its search moves on.
    public func providerWentOffline(_ provider: String) async {
        guard let live = book.liveOffer(heldBy: provider),
            let closed = try? await book.close(live.offer.offerId, .withdrawn, unlessAccepting: true)
        else { return }
        ended(closed, .withdrawn, notify: true)
    }

    /// Another node ended an offer (accepted, declined, withdrawn): the search waiting on it here moves on.
    public func offerEndedElsewhere(tripId: String, offerId: String, ending: OfferEnding) {
        _ = state.withLock { $0.searches[tripId]?.signals.yield(.offerEnded(offerId: offerId, ending)) }
    }

    /// A provider became findable: searches waiting for supply look again.
    public func supplyChanged() {
        state.withLock { s in
            for (id, search) in s.searches where search.waitingForSupply {
                s.searches[id]?.waitingForSupply = false
                search.signals.yield(.supplyChanged)
            }
        }
    }

    // MARK: - Trip changes

    func tripCommitted(from old: TripRecord?, to new: TripRecord) {
        let running = state.withLock { s -> Bool? in
            if let quitter = old?.providerId, new.providerId == nil { s.gaveUp[new.id, default: []].insert(quitter) }
            if !new.status.isActive { s.gaveUp[new.id] = nil }
            guard s.started else { return nil }
            return s.searches[new.id] != nil
        }
        // A new trip, or one whose provider gave it back: search.
        if running == false, Self.needsProvider(new) { begin(new.id) }
    }

    func tripSeen(_ trip: TripRecord) {
        _ = state.withLock { $0.searches[trip.id]?.signals.yield(.tripChanged) }
    }

    /// True while the trip is waiting for a provider: a searching ride, or a delivery without a courier.
    static func needsProvider(_ trip: TripRecord) -> Bool { trip.waitsForProvider }

    // MARK: - Helpers

    /// The trip while it still needs a provider.
    func waiting(_ tripId: String) -> TripRecord? {
        guard let trip = try? service.cached(tripId), Self.needsProvider(trip) else { return nil }
        return trip
    }

    func current(_ tripId: String) throws -> TripRecord {
        guard let trip = try service.cached(tripId) else { throw TripError.notFound }
        return trip
    }

    /// Ends a claimed offer after its accept finished.
    func finish(_ offerId: String, _ ending: OfferEnding) async {
        if let closed = try? await book.close(offerId, ending, unlessAccepting: false) {
            ended(closed, ending, notify: false)
        }
    }

    /// Counts an ended offer, tells its holder when it was taken back, and wakes its search, here or on the node
    /// running it.
    func ended(_ offer: OfferRecord, _ ending: OfferEnding, notify: Bool, signal: Bool = true) {
        metrics.increment(
            "enroute_dispatch_offers_total", labels: ["ending": ending.rawValue],
            help: "Offers made, by how they ended.")
        let tripId = offer.offer.tripId, offerId = offer.offer.offerId
        let city = (try? service.cached(tripId))?.city
        if notify {
            tell(
                offer.providerId, LiveEventName.offerWithdrawn.rawValue,
                OfferWithdrawn(offerId: offerId, tripId: tripId), city: city)
        }
        guard signal else { return }
        let local = state.withLock { $0.searches[tripId]?.signals.yield(.offerEnded(offerId: offerId, ending)) != nil }
        if !local {
            peers?.share(
                .offerEnded(tripId: tripId, offerId: offerId, ending: ending), city: city ?? Cities.defaultName)
        }
    }

    /// Sends an event to the provider's live streams on this node and on every other.
    func tell(_ provider: String, _ name: String, _ payload: some Encodable, city: String?) {
        events.send(name, payload, to: provider)
        guard let peers, let data = try? WireCoding.encoder().encode(payload) else { return }
        peers.share(.providerEvent(provider: provider, name: name, data: Array(data)), city: city ?? Cities.defaultName)
    }

    /// Yields `.timer(token)` to the search after `duration`, slept in steps of `step`.
    func startTimer(
        _ duration: Duration, _ continuation: AsyncStream<Signal>.Continuation, step: Duration = longestTimer
    ) -> (token: UInt64, task: Task<Void, Never>) {
        let token = timers.wrappingAdd(1, ordering: .relaxed).newValue
        let clock = self.clock
        let task = Task {
            do { try await Self.sleep(clock, duration, step: step) } catch { return }
            continuation.yield(.timer(token))
        }
        return (token, task)
    }

    static func sleep(_ clock: some Clock<Duration>, _ duration: Duration, step: Duration = longestTimer) async throws {
        // Most of these timers are cancelled long before they run out (a search's wait ends when the trip is assigned).
        try await clock.sleep(for: duration, inStepsOf: step)
    }

    /// `seconds` as a timer's duration, rounded up to the millisecond.
    static func duration(_ seconds: TimeInterval) -> Duration { .milliseconds(Int64((seconds * 1000).rounded(.up))) }

    static func seconds(_ d: Duration) -> TimeInterval {
        let (s, atto) = d.components
        return Double(s) + Double(atto) / 1e18
    }

    static func explain(_ ending: OfferEnding) -> String {
        switch ending {
        case .accepted: "This offer was accepted, and the trip has moved on since."
        case .declined: "This offer was declined."
        case .expired: "This offer has expired."
        case .withdrawn: "This offer was withdrawn: the trip was cancelled or taken by another provider."
        }
    }
}
