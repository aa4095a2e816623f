public import Foundation
public import EnRouteModels
import Synchronization

/// Where each active trip's provider is and when they will arrive: fixes move the trip in memory and reach its watchers
/// at once; a drifted ETA is written down at most once a minute; other nodes' versions and new road routes are taken
/// in as they come.
public final class LiveTrips: Sendable {
    let commits: TripCommits
    let estimator: any TripEstimator
    private let fixListeners = Mutex<[@Sendable (_ trip: TripRecord, _ fixes: [LocationFix]) -> Void]>([])

    init(commits: TripCommits, estimator: any TripEstimator) {
        self.commits = commits; self.estimator = estimator
        // A new road route changes a trip's ETA between fixes: refresh it and tell the watchers, as a fix does.
        estimator.onRouteChange { [weak self] id in await self?.routeChanged(id) }
    }

    /// How far a fix-driven ETA must move from the stored one before it is written down (and
    /// observers, such as the Live Activity planner, see the drift in a transaction).
    public var etaDriftToPersist: TimeInterval { 60 }

    /// The least time between a trip's last write and a drift write: at most one a minute per trip,
    /// however fast its fixes come (the watchers get every fix's ETA live, unwritten).
    public var etaDriftMinInterval: TimeInterval { 60 }

    /// Puts a provider's fixes (oldest first) on their active trip, one after another, skipping any no
    /// newer than the trip's, and tells its watchers once with every step, so a batch costs each
    /// watcher one write. Returns the trip as left, or nil when nothing changed.
    @discardableResult
    public func recordFixes(_ fixes: [LocationFix], provider: String, shared: Bool = true) -> TripRecord? {
        let at = commits.now()
        let estimator = self.estimator
        let (steps, newest): ([TripRecord], TripRecord?) = commits.cache.withState { c in
            // A courier carrying several orders moves each of them; the newest is the one named.
            let ids = (c.activeByProvider[provider] ?? []).sorted {
                (c.trips[$0]?.createdAt ?? .distantPast, $0) < (c.trips[$1]?.createdAt ?? .distantPast, $1)
            }
            var steps: [TripRecord] = []
            var newest: TripRecord?
            for id in ids {
                guard var trip = c.trips[id] else { continue }
                var moved = false
                for fix in fixes {
                    if let last = trip.providerFix, last.recordedAt >= fix.recordedAt { continue }
                    trip.providerFix = ProviderFix(
                        coordinate: fix.coordinate, heading: fix.heading, speed: fix.speed,
                        recordedAt: fix.recordedAt, seq: (trip.providerFix?.seq ?? 0) + 1)
                    trip = estimator.refreshETA(trip, now: at)
                    steps.append(trip)
                    moved = true
                }
                c.trips[id] = trip
                if moved { newest = trip }
            }
            return (steps, newest)
        }
        guard let last = newest else { return nil }
        commits.hub.publish(steps)
        if shared {
            let kept = fixes.filter { fix in steps.contains { $0.providerFix?.recordedAt == fix.recordedAt } }
            for listener in fixListeners.withLock({ $0 }) { listener(last, kept) }
        }
        return last
    }

    /// Calls `listener` with the trip and the fixes this node kept on it (`recordFixes`), not with fixes another node
    /// sent.
    public func onFixes(_ listener: @escaping @Sendable (_ trip: TripRecord, _ fixes: [LocationFix]) -> Void) {
        fixListeners.withLock { $0.append(listener) }
    }

    /// Takes a version another node committed (from the live bus or a resync): kept when it is not older than the one
    /// held, then told to this node's watchers and change listeners, never to its commit listeners (the committing
    /// node ran those side effects).
    public func absorb(_ record: TripRecord) {
        var trip = record
        let limit = commits.cache.endedLimit
        let kept: TripRecord?? = commits.cache.withState { c in
            let old = c.trips[trip.id]
            // Fixes travel apart from versions: a newer one held here stays on the record.
            trip.keepNewerFix(of: old)
            if let old, old == trip { return nil }
            return TripCache.remember(trip, in: &c, endedLimit: limit) ? .some(old) : nil
        }
        guard let kept else { return }
        commits.hub.publish([trip])
        commits.absorbed(trip, previous: kept)
    }

    /// A new road route arrived for `tripId`: its ETA (and where its provider is drawn) is computed again on the same
    /// fix and, when it changed, published as a new step of that fix (`seq` + 1, so clients that keep the newest
    /// `seq` take it), and written down when it drifted as a fix's would be (the Live Activity hears of it).
    func routeChanged(_ tripId: String) async {
        let at = commits.now()
        let estimator = self.estimator
        let step: TripRecord? = commits.cache.withState { c in
            guard let trip = c.trips[tripId], trip.status.isActive else { return nil }
            var next = estimator.refreshETA(trip, now: at)
            guard
                next.etaEarliest != trip.etaEarliest || next.etaLatest != trip.etaLatest
                    || next.providerFix?.snapped != trip.providerFix?.snapped
            else {
                return nil
            }
            next.providerFix?.seq += 1
            c.trips[tripId] = next
            return next
        }
        guard let step else { return }
        commits.hub.publish([step])
        _ = try? await persistETADrift(of: tripId)
    }

    /// Keeps the map-matched path of a finished trip on its record (no version change) and returns it.
    @discardableResult
    public func recordMatchedPath(
        of tripId: String, distanceMeters: Double, durationSeconds: Double
    ) async throws -> TripRecord? {
        try await commits.rewrite(tripId) { trip in
            trip.matchedDistanceMeters = distanceMeters
            trip.matchedDurationSeconds = durationSeconds
            return true
        }
    }

    /// Stores the ETA a fix moved, when it drifted enough from the stored one and the trip was not
    /// written in the last `etaDriftMinInterval`: no version change, one transaction, observers
    /// called with the stored record as `old`. Returns whether it wrote.
    @discardableResult
    public func persistETADrift(of tripId: String) async throws -> Bool {
        let known = commits.cache.withState { c in c.trips[tripId].map { ($0, c.stored[tripId]) } }
        guard let (current, stored) = known, current.status.isActive, let latest = current.etaLatest else {
            return false
        }
        let threshold = etaDriftToPersist, interval = etaDriftMinInterval, at = commits.now()
        // Decided in memory for nearly every batch, without a transaction.
        if let stored {
            if at.timeIntervalSince(stored.at) < interval { return false }
            if let eta = stored.eta, abs(latest.timeIntervalSince(eta)) < threshold { return false }
        }
        let observers = commits.observers
        let wrote = try await commits.transaction { tx in
            guard let stored = try await tx.trip(tripId), stored.version == current.version,
                at.timeIntervalSince(stored.updatedAt) >= interval,
                abs(latest.timeIntervalSince(stored.etaLatest ?? .distantPast)) >= threshold
            else { return false }
            var next = stored
            next.etaEarliest = current.etaEarliest
            next.etaLatest = current.etaLatest
            next.providerFix = current.providerFix
            next.updatedAt = at
            try await tx.update(next, expectedVersion: stored.version)
            for observer in observers { try await observer.tripChanged(from: stored, to: next, in: tx) }
            return true
        }
        if wrote {
            commits.cache.withState { c in
                if c.trips[tripId]?.version == current.version { c.stored[tripId] = (latest, at) }
            }
        }
        return wrote
    }
}
