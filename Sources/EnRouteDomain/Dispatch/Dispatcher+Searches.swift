public import Foundation
public import EnRouteModels
import Synchronization
import EnRouteLogging

/// Searches: one task per trip that needs a provider, offering it to one candidate at a time.
extension Dispatcher {
    // MARK: - Searches

    func begin(_ tripId: String, leased: Bool = false) {
        let (signals, continuation) = AsyncStream<Signal>.makeStream()
        let excluding = state.withLock { s -> Set<String>? in
            guard s.started, s.searches[tripId] == nil else { return nil }
            s.searches[tripId] = Search(signals: continuation)
            return s.gaveUp[tripId] ?? []
        }
        guard let excluding else { return }
        let task = Task { [self] in
            // Another node runs this search (it committed the change too, or took it over): nothing to do here.
            let held = leased ? true : await leaseSearch(tripId)
            guard held else { return end(tripId, restart: false) }
            await run(tripId, signals, continuation, excluding: excluding)
            end(tripId)
        }
        let stopped = state.withLock { s -> Bool in
            s.searches[tripId]?.task = task
            return s.searches[tripId] == nil
        }
        if stopped { task.cancel() }
    }

    func end(_ tripId: String, restart: Bool = true) {
        let started = state.withLock { s -> Bool in
            s.searches[tripId]?.signals.finish()
            s.searches[tripId] = nil
            return s.started
        }
        // A change that arrived while the search was finishing may have handed the trip back: search again, keeping the
        // lease.
        if restart, started, let trip = try? service.cached(tripId), Self.needsProvider(trip) { return begin(tripId) }
        if restart, let node {
            let book = self.book
            Task { try? await book.releaseSearch(tripId, node: node) }
        }
    }

    enum RoundOutcome { case done, exhausted }

    func run(
        _ tripId: String, _ signals: AsyncStream<Signal>, _ continuation: AsyncStream<Signal>.Continuation,
        excluding: Set<String>
    ) async {
        var inbox = signals.makeAsyncIterator()
        var excluded = excluding
        guard await awaitMatchingStart(tripId, &inbox, continuation),
            await awaitCourierStart(tripId, &inbox, continuation)
        else { return }
        while !Task.isCancelled {
            guard case .exhausted = await round(tripId, &inbox, continuation, excluded: &excluded),
                !Task.isCancelled, let trip = waiting(tripId)
            else { return }
            if trip.kind == .ride, !keepsLooking(trip) {
                metrics.increment(
                    "enroute_dispatch_searches_total", labels: ["result": "noProviderFound"],
                    help: "Dispatch searches by how they ended.")
                _ = try? await service.move(tripId, .noProviderFound, by: Self.account)
                return
            }
            metrics.increment(
                "enroute_dispatch_searches_total", labels: ["result": "retryLater"],
                help: "Dispatch searches by how they ended.")
            excluded = state.withLock { $0.gaveUp[tripId] ?? [] }
            var retry = policy.deliveryRetry
            if trip.kind == .ride, let due = trip.scheduledFor {
                retry = min(retry, Self.duration(max(0.001, due.timeIntervalSince(now()))))
            }
            let timer = startTimer(retry, continuation)
            defer { timer.task.cancel() }
            waitLoop: while let signal = await inbox.next() {
                switch signal {
                case .timer(let token) where token == timer.token: break waitLoop
                case .tripChanged where waiting(tripId) == nil: return
                default: continue
                }
            }
        }
    }

    /// One search: at most `maxCandidates` offers within `searchLimit`.
    func round(
        _ tripId: String, _ inbox: inout AsyncStream<Signal>.Iterator, _ continuation: AsyncStream<Signal>.Continuation,
        excluded: inout Set<String>
    ) async -> RoundOutcome {
        let deadline = now().addingTimeInterval(Self.seconds(policy.searchLimit))
        var offered = 0
        while offered < policy.maxCandidates {
            guard !Task.isCancelled, let trip = waiting(tripId) else { return .done }
            let remaining = deadline.timeIntervalSince(now())
            guard remaining > 0 else { return .exhausted }
            // A search taken over from a node that died finds that node's offer still out: its holder may yet accept.
            if let inherited = book.liveOffer(forTrip: tripId) {
                excluded.insert(inherited.providerId)
                offered += 1
                let left = max(0, inherited.offer.expiresAt.timeIntervalSince(now()))
                switch await outcome(
                    of: inherited.offer, within: Self.duration(left), inbox: &inbox,
                    continuation)
                {
                case .accepted: return .done
                case .declined, .expired, .withdrawn: continue
                }
            }
            // Listen for supply before looking, so that a provider appearing meanwhile is not missed.
            state.withLock { $0.searches[tripId]?.waitingForSupply = true }
            let look = await withStacking(await look(for: trip, excluding: excluded), for: trip, excluding: excluded)
            state.withLock { $0.searches[tripId]?.foundNobody = look == .nobody }
            guard case .found(let candidate) = look else {
                // Nobody to ask: wait for a provider to become findable, until the deadline. On a node of several, or
                // when presence could not be read, look again by itself meanwhile.
                let recheck = look == .unreadable || node != nil
                let wait = recheck ? min(remaining, Self.seconds(policy.supplyRecheck)) : remaining
                let timer = startTimer(Self.duration(wait), continuation)
                defer { timer.task.cancel() }
                while let signal = await inbox.next() {
                    switch signal {
                    case .supplyChanged: break
                    case .timer(let token) where token == timer.token: if wait >= remaining { return .exhausted }
                    case .tripChanged where waiting(tripId) == nil: return .done
                    default: continue
                    }
                    break
                }
                if Task.isCancelled { return .done }
                continue
            }
            // A node of several makes an offer only while it still holds the search: one stopped past its lease and
            // resumed finds another node took it, and stops.
            guard await leaseSearch(tripId) else { return .done }
            // The look took time (a shared store, a road table): an operator may have assigned the trip meanwhile, or
            // its
            // customer cancelled it. Nobody is offered a trip that no longer needs them.
            guard let current = waiting(tripId) else { return .done }
            excluded.insert(candidate.providerId)
            var offer = Offer(
                offerId: ids.next(), tripId: tripId, pickup: current.pickup, dropoff: current.dropoff,
                expiresAt: now().addingTimeInterval(Self.seconds(policy.offerTimeout)))
            offer.stops = candidate.stops
            offer.addedSeconds = candidate.addedSeconds.map { Int($0.rounded()) }
            guard (try? await book.open(offer, to: candidate.providerId, now: now())) == true else {
                if waiting(tripId) == nil { return .done }
                continue
            }
            // The trip changed while the offer opened: it is withdrawn before anyone hears of it.
            guard waiting(tripId) != nil else {
                _ = try? await book.close(offer.offerId, .withdrawn, unlessAccepting: true)
                return .done
            }
            offered += 1
            tell(candidate.providerId, LiveEventName.offer.rawValue, offer, city: trip.city)
            await offers?.offerMade(offer, to: candidate.providerId)
            switch await outcome(of: offer, inbox: &inbox, continuation) {
            case .accepted: return .done
            case .declined, .expired, .withdrawn: continue
            }
        }
        return .exhausted
    }

    /// Waits until the offer ends: answered, run out, withdrawn, or its trip no longer needs anyone.
    func outcome(
        of offer: Offer, within limit: Duration? = nil, inbox: inout AsyncStream<Signal>.Iterator,
        _ continuation: AsyncStream<Signal>.Continuation
    ) async -> OfferEnding {
        var timer = startTimer(limit ?? policy.offerTimeout, continuation)
        defer { timer.task.cancel() }
        while let signal = await inbox.next() {
            switch signal {
            case .offerEnded(let id, let ending) where id == offer.offerId:
                return ending
            case .timer(let token) where token == timer.token:
                if let closed = try? await book.close(offer.offerId, .expired, unlessAccepting: true) {
                    ended(closed, .expired, notify: true, signal: false)
                    return .expired
                }
                // Ended on another node (its word may still be on the way), or being accepted right now: the accept
                // decides,
                // and is looked at again shortly in case its node died in the middle.
                if let ending = (try? book.offer(id: offer.offerId))?.ending { return ending }
                timer = startTimer(policy.acceptGrace, continuation)
            case .tripChanged where waiting(offer.tripId) == nil:
                if let closed = try? await book.close(offer.offerId, .withdrawn, unlessAccepting: true) {
                    ended(closed, .withdrawn, notify: true, signal: false)
                    return .withdrawn
                }
            default:
                continue
            }
        }
        // The search was stopped.
        return .withdrawn
    }

    enum Look: Equatable {
        case found(DispatchCandidate)
        case nobody
        /// The provider locations could not be read (their shared store is unreachable).
        case unreadable
    }

    func bestCandidate(for trip: TripRecord, excluding excluded: Set<String>) async -> Look {
        guard let candidates = await nearby(trip, excluding: excluded) else { return .unreadable }
        return await ranking.rank(candidates, pickup: trip.pickup).first.map(Look.found) ?? .nobody
    }

    /// The shortlist: the nearest online, idle providers not holding an offer nor excluded; nil when the provider
    /// locations could not be read.
    func nearby(_ trip: TripRecord, excluding excluded: Set<String>) async -> [DispatchCandidate]? {
        let holding = book.holders()
        let service = self.service
        let hits: [GeoHit<String>]
        do {
            hits = try await presence.nearest(to: trip.pickup, limit: policy.shortlist, within: policy.searchRadius) {
                id in
                !excluded.contains(id) && !holding.contains(id) && service.isIdle(provider: id)
            }
        } catch {
            metrics.increment(
                "enroute_presence_failures_total", labels: ["call": "dispatch"],
                help: "Calls to the provider locations that failed, by caller.")
            log.warning(
                "dispatch: could not read provider locations for trip \(trip.id), looking again shortly: \(error)")
            return nil
        }
        return hits.map { DispatchCandidate(providerId: $0.id, position: $0.coordinate, distance: $0.distance) }
    }
}
