public import Foundation
public import EnRouteModels
import Synchronization
public import EnRouteLogging

/// Location ingest: each provider's batches, applied once, filtered, stored, fanned out.
///
/// A batch is sorted by `recordedAt` and each fix judged against the last kept one; implausible fixes
/// are dropped and counted by reason in `/metrics`. Kept fixes on a trip are stored on its path before
/// the batch is acknowledged; then the newest becomes the provider's position for dispatch and the
/// nearby map, and each reaches the trip's watchers. A batch id seen among the provider's recent
/// batches gets its first answer again without being applied twice. When the provider locations cannot
/// be written (their shared store is unreachable), the batch is still kept and answered: the position
/// waits for the provider's next batch, as a lost live message waits for the next.
public final class LocationIngest: Sendable {
    private struct Track {
        var last: LocationFix?
        var recent: [(id: String, result: LocationBatchResult)] = []
    }

    /// How many recent batch ids per provider are remembered; an older resend is harmless all the
    /// same, because its fixes are no newer than the last kept one.
    public let batchMemory: Int
    private let tracks = Mutex<[String: Track]>([:])
    private let service: TripService
    private let presence: any ProviderLocations
    private let paths: any PathStore
    private let policy: FixPlausibilityPolicy
    private let metrics: any MetricsSink
    private let supplyChanged: @Sendable (_ at: Coordinate) -> Void
    private let log: Logger
    private let now: @Sendable () -> Date
    private let speeds: (any RoadSpeedFeedback)?

    /// An ingest feeding `presence` (this node's own, or the store every node shares) and `service`, storing paths in
    /// `paths`; `supplyChanged` is called with the position at which a provider became findable again; `speeds` hears
    /// every kept fix; `log` hears of positions the provider locations would not take.
    public init(
        service: TripService, presence: any ProviderLocations, paths: any PathStore,
        policy: FixPlausibilityPolicy = FixPlausibilityPolicy(),
        metrics: any MetricsSink, batchMemory: Int = 8,
        supplyChanged: @escaping @Sendable (_ at: Coordinate) -> Void = { _ in },
        speeds: (any RoadSpeedFeedback)? = nil, log: Logger = .discard,
        now: @escaping @Sendable () -> Date
    ) {
        self.service = service; self.presence = presence; self.paths = paths; self.policy = policy;
        self.metrics = metrics
        self.batchMemory = batchMemory; self.supplyChanged = supplyChanged; self.speeds = speeds; self.log = log;
        self.now = now
    }

    /// Applies one batch from `provider`; throws only when the path could not be stored (the batch
    /// is then forgotten, so that a resend applies it).
    public func ingest(_ batch: LocationBatch, provider: String) async throws -> LocationBatchResult {
        let at = now()
        let sorted = batch.fixes.sorted { $0.recordedAt < $1.recordedAt }
        let outcome = judge(sorted, of: batch.batchId, from: provider, at: at)
        if let replay = outcome.replay {
            metrics.increment(
                "enroute_location_batches_replayed_total",
                help: "Location batches answered again without being applied.")
            return replay
        }
        let kept = outcome.kept
        let result = LocationBatchResult(
            batchId: batch.batchId, accepted: kept.count, dropped: sorted.count - kept.count)
        for (reason, count) in outcome.drops {
            metrics.increment(
                "enroute_location_fixes_dropped_total", labels: ["reason": reason.rawValue], by: Double(count),
                help: "Location fixes dropped by the plausibility filters, by reason.")
        }
        guard let newest = kept.last else { return result }
        metrics.increment("enroute_location_fixes_accepted_total", by: Double(kept.count), help: "Location fixes kept.")
        speeds?.observe(provider: provider, fixes: kept)
        // Each order a courier carries keeps the path: its price and any dispute rest on it.
        let onTrips = service.activeTrips(provider: provider)
        if !onTrips.isEmpty {
            let points = onTrips.flatMap { trip in
                kept.map {
                    PathPoint(
                        tripId: trip.id, providerId: provider, lat: $0.lat, lng: $0.lng, heading: $0.heading,
                        speed: $0.speed, accuracy: $0.accuracy, recordedAt: $0.recordedAt, receivedAt: at)
                }
            }
            do {
                try await paths.append(points)
            } catch {
                tracks.withLock { all in
                    all[provider]?.recent.removeAll { $0.id == batch.batchId }
                    if all[provider]?.last == newest { all[provider]?.last = outcome.previous }
                }
                throw error
            }
        }
        do {
            if try await presence.update(provider, to: newest.coordinate, recordedAt: newest.recordedAt) {
                supplyChanged(newest.coordinate)
            }
        } catch {
            metrics.increment(
                "enroute_presence_failures_total", labels: ["call": "ingest"],
                help: "Calls to the provider locations that failed, by caller.")
            log.warning(
                Logger.Message(
                    "ingest: \(provider)'s position was not recorded in the provider locations (the fixes are "
                        + "kept): \(error)"
                ))
        }
        let moved = service.recordFixes(kept, provider: provider)
        // An ETA the fixes moved far enough is stored, so drift reaches the Live Activity by push.
        if moved != nil { for trip in onTrips { _ = try? await service.persistETADrift(of: trip.id) } }
        return result
    }

    /// What the filters made of a batch: an answer to replay for a batch seen before, or the fixes kept, the drops by
    /// reason, and the provider's last fix before the batch (restored when the batch cannot be stored).
    private struct Judged {
        var replay: LocationBatchResult?
        var kept: [LocationFix] = []
        var drops: [FixDropReason: Int] = [:]
        var previous: LocationFix?
    }

    /// Runs the plausibility filters over `sorted` (oldest first) against the provider's track, and remembers the
    /// batch's answer.
    private func judge(_ sorted: [LocationFix], of batchId: String, from provider: String, at: Date) -> Judged {
        let policy = self.policy, memory = batchMemory
        return tracks.withLock { all in
            var track = all[provider] ?? Track()
            if let seen = track.recent.first(where: { $0.id == batchId }) { return Judged(replay: seen.result) }
            var judged = Judged(previous: track.last)
            judged.kept.reserveCapacity(sorted.count)
            for fix in sorted {
                if let reason = policy.judge(fix, after: track.last, now: at) {
                    judged.drops[reason, default: 0] += 1
                } else {
                    judged.kept.append(fix)
                    track.last = fix
                }
            }
            let result = LocationBatchResult(
                batchId: batchId, accepted: judged.kept.count, dropped: sorted.count - judged.kept.count)
            track.recent.append((batchId, result))
            if track.recent.count > memory { track.recent.removeFirst(track.recent.count - memory) }
            all[provider] = track
            return judged
        }
    }
}
