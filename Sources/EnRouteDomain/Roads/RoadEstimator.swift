public import Foundation
public import EnRouteModels
import Synchronization
public import EnRouteLogging

/// Arrival windows, estimates and pickup waits from real roads: the road route from the provider's latest kept fix to
/// the next stop, followed fix by fix, with the window's width from the calibrated error model (`EtaCalibration`).
///
/// `refreshETA` runs inside the trip service's transactions and under its lock on every fix, so it never waits for
/// the router: each trip's current leg (`RouteProgress`) is kept in memory and every fix is projected onto it (a
/// few microseconds). The route itself is asked of the road seam off the lock, in a task: when a leg starts, when a
/// fix is more than `offRouteMeters` from it (at once), and otherwise at most once per `recomputeInterval` of the
/// service's clock. When a new route arrives the listeners (the trip service) refresh the trip's ETA and publish it.
/// Until a leg's first route arrives, or when the router cannot place a position on a road, the window is the
/// straight-line one (`StraightLineEstimator`), counted in `enroute_eta_fallback_total` and logged.
public final class RoadEstimator: TripEstimator {
    /// Which part of a trip a route covers.
    enum LegKind: String, Sendable { case toPickup, toDropoff, pickupToDropoff }

    private struct LegKey: Hashable, Sendable { var trip: String; var kind: LegKind }

    private struct Leg: Sendable {
        var origin: Coordinate
        var target: Coordinate
        var progress: RouteProgress
        var computedAt: Date
        var segment = 0
        /// When the leg's first route was asked for, and what it predicted: the calibration sample's baseline.
        var startedAt: Date
        var predictedSeconds: Double
        /// The class the leg's route spends the most time on: the calibration history its window reads.
        var roadClass: String
    }

    private struct State: Sendable {
        var legs: [LegKey: Leg] = [:]
        var pending: Set<LegKey> = []
        var failedAt: [LegKey: Date] = [:]
        var calibration: EtaCalibration
        var listeners: [@Sendable (String) async -> Void] = []
        var nearby: (@Sendable (Coordinate) async -> [Coordinate])?
        var running: Set<Int> = []
        var tasks: [Int: Task<Void, Never>] = [:]
        var nextTask = 0
        var recomputes = 0
    }

    /// The road network asked.
    public let roads: any RoadRouting
    /// Straight lines: for positions the roads cannot place, and until a leg's first route arrives.
    public let fallback: StraightLineEstimator
    /// Seconds between two recomputes of one trip's route while the provider stays on it.
    public let recomputeInterval: TimeInterval
    /// Metres off the route past which a fix asks for a new route at once.
    public let offRouteMeters: Double
    /// The least time to a rider-facing window's latest end while the provider has not arrived.
    public let minimumETA: TimeInterval
    /// The service area's time zone, for the calibration's hour of the week.
    public let timeZone: TimeZone
    /// Most samples read back from the store at start.
    public let historyLimit = 20_000
    private let samples: any EtaSampleStore
    private let metrics: any MetricsSink
    private let log: Logger
    private let state: Mutex<State>

    /// An estimator on `roads`, its error model kept in `samples` (read back now).
    public init(
        roads: any RoadRouting, samples: any EtaSampleStore = InMemoryEtaSampleStore(),
        fallback: StraightLineEstimator = StraightLineEstimator(),
        calibrationMinimum: Int = 20, recomputeInterval: TimeInterval = 30, offRouteMeters: Double = 50,
        minimumETA: TimeInterval = 60,
        timeZone: TimeZone = TimeZone(identifier: "UTC")!, metrics: any MetricsSink = NoMetrics(),
        log: Logger = .discard
    ) {
        self.roads = roads; self.samples = samples; self.fallback = fallback; self.recomputeInterval = recomputeInterval
        self.offRouteMeters = offRouteMeters; self.minimumETA = minimumETA; self.timeZone = timeZone;
        self.metrics = metrics; self.log = log
        let history = (try? samples.recent(limit: historyLimit)) ?? []
        state = Mutex(State(calibration: EtaCalibration(samples: history, minimumSamples: calibrationMinimum)))
    }

    public var products: [String] { fallback.products }

    /// The error model as it stands.
    public var calibration: EtaCalibration { state.withLock { $0.calibration } }

    /// Route requests sent to the road seam since start.
    public var recomputeCount: Int { state.withLock { $0.recomputes } }

    public func onRouteChange(_ listener: @escaping @Sendable (String) async -> Void) {
        state.withLock { $0.listeners.append(listener) }
    }

    /// Where available providers are near a pickup (the geo index), for the pickup wait of an estimate.
    public func setNearbyProviders(_ nearby: @escaping @Sendable (Coordinate) async -> [Coordinate]) {
        state.withLock { $0.nearby = nearby }
    }

    /// Waits until every route request and background job started so far (and any they started) has finished.
    public func settle() async {
        while true {
            let tasks = state.withLock { s in s.running.isEmpty ? nil : Array(s.tasks.values) }
            guard let tasks else { return }
            if tasks.isEmpty { await Task.yield(); continue }
            for task in tasks { await task.value }
        }
    }

    /// Runs `work` in the background, counted by `settle()`.
    public func spawn(_ work: @escaping @Sendable () async -> Void) {
        let id = state.withLock { s in
            s.nextTask += 1; s.running.insert(s.nextTask); return s.nextTask
        }
        let task = Task { [self] in
            await work()
            _ = state.withLock { s in
                s.running.remove(id); s.tasks[id] = nil
            }
        }
        state.withLock { s in if s.running.contains(id) { s.tasks[id] = task } }
    }

    // MARK: - ETAs

    /// Seconds to a stop, and where the provider is drawn on the road (nil when off it or unknown).
    private struct Travel { var seconds: Double; var snapped: Coordinate?; var byRoad: Bool; var roadClass = "all" }

    public func refreshETA(_ trip: TripRecord, now: Date) -> TripRecord {
        var trip = trip
        let fix = trip.providerFix
        var window: (earliest: Date, latest: Date)?
        var snapped: Coordinate?
        let calibration = state.withLock { $0.calibration }
        let hour = EtaCalibration.hourOfWeek(now, in: timeZone)
        func range(_ t: Travel) -> EtaBand {
            t.byRoad ? calibration.band(roadClass: t.roadClass, hourOfWeek: hour) : .default
        }
        let departed = StraightLineEstimator.departure(from: fix, now: now)
        switch trip.status {
        case .ride(.driverAssigned):
            if let fix {
                let t = follow(trip.id, .toPickup, fix, trip.pickup, now: now)
                snapped = t.snapped
                window = Self.window(start: departed, t.seconds, range(t))
            }
        case .ride(.onTrip), .delivery(.onTheWay), .delivery(.arriving):
            var t: Travel
            // A courier carrying several orders drives through the others' stops first: to the first, then as planned.
            let approach = trip.stackedApproach
            if let fix {
                t = follow(trip.id, .toDropoff, fix, approach?.first ?? trip.dropoff, now: now)
                snapped = t.snapped
            } else {
                t = fixed(trip.id, trip.pickup, trip.dropoff, now: now)
            }
            if let approach { t.seconds += approach.after + Double(approach.stops) * StopPlanner.stopSeconds }
            window = Self.window(start: departed, t.seconds, range(t))
        case .delivery(.placed), .delivery(.picking):
            // The merchant's preparation is kept: the courier leaves the merchant at max(ready, courier arrival).
            let ready = max(now, trip.readyAt ?? now.addingTimeInterval(fallback.defaultPreparation))
            var main = fixed(trip.id, trip.pickup, trip.dropoff, now: now)
            if let ride = trip.stackedRide {
                main.seconds = ride.seconds + Double(ride.stops) * StopPlanner.stopSeconds
            }
            let b = range(main)
            var leaveEarliest = ready, leaveLatest = ready
            if let fix {
                let approach = trip.stackedApproach
                var a = follow(trip.id, .toPickup, fix, approach?.first ?? trip.pickup, now: now)
                if let approach { a.seconds += approach.after + Double(approach.stops) * StopPlanner.stopSeconds }
                let ab = range(a)
                leaveEarliest = max(ready, departed.addingTimeInterval(ab.low * a.seconds + ab.lowExtra))
                leaveLatest = max(ready, departed.addingTimeInterval(ab.high * a.seconds))
            }
            let earliest = leaveEarliest.addingTimeInterval(b.low * main.seconds + b.lowExtra)
            let latest = leaveLatest.addingTimeInterval(b.high * main.seconds + b.highExtra)
            window = Self.floor((earliest, latest), now: now, since: now, minimum: minimumETA)
        default:
            break
        }
        if let w = window, trip.status != .delivery(.placed) && trip.status != .delivery(.picking) {
            window = Self.floor(w, now: now, since: departed, minimum: minimumETA)
        }
        trip.providerFix?.snapped = snapped
        if let window {
            trip.etaEarliest = Date(timeIntervalSince1970: window.earliest.timeIntervalSince1970.rounded())
            trip.etaLatest = Date(timeIntervalSince1970: window.latest.timeIntervalSince1970.rounded(.up))
        } else {
            trip.etaEarliest = nil
            trip.etaLatest = nil
        }
        return trip
    }

    private static func window(start: Date, _ seconds: Double, _ band: EtaBand) -> (earliest: Date, latest: Date) {
        (
            start.addingTimeInterval(band.low * seconds + band.lowExtra),
            start.addingTimeInterval(band.high * seconds + band.highExtra)
        )
    }

    /// A window that starts no earlier than `since` (when the fix it rests on was taken: the provider may have
    /// arrived any time after it) and ends at least `minimum` from now (never "0 min" while the provider has not
    /// arrived), never inverted. The earliest end is not pushed out: a provider seconds away may arrive now, and a
    /// window that starts a minute ahead of them would be a promise already broken.
    private static func floor(
        _ w: (earliest: Date, latest: Date), now: Date, since: Date, minimum: TimeInterval
    ) -> (earliest: Date, latest: Date) {
        let earliest = max(w.earliest, since)
        return (earliest, max(w.latest, earliest, now.addingTimeInterval(minimum)))
    }

    /// The provider's time to `target` on the trip's `kind` leg: projected on the leg's route when there is one (and
    /// a recompute asked for when due), straight-line until it arrives.
    private func follow(_ trip: String, _ kind: LegKind, _ fix: ProviderFix, _ target: Coordinate, now: Date) -> Travel
    {
        let key = LegKey(trip: trip, kind: kind)
        let position = fix.coordinate
        enum Next { case none, route(reason: String) }
        let (travel, next): (Travel?, Next) = state.withLock { s in
            guard var leg = s.legs[key], leg.target == target else {
                return (nil, Self.due(s, key, now: now, interval: recomputeInterval) ? .route(reason: "start") : .none)
            }
            guard let p = leg.progress.project(position, from: leg.segment) else { return (nil, .none) }
            leg.segment = p.segment
            s.legs[key] = leg
            let pending = s.pending.contains(key)
            if p.offRouteMeters > offRouteMeters {
                // Off the route: back to it in a straight line, then along it, until the new route arrives.
                let back = fallback.travel(position, p.point)
                return (
                    Travel(seconds: p.remainingSeconds + back, snapped: nil, byRoad: true, roadClass: leg.roadClass),
                    pending ? .none : .route(reason: "offRoute")
                )
            }
            let stale = now.timeIntervalSince(leg.computedAt) >= recomputeInterval
            return (
                Travel(seconds: p.remainingSeconds, snapped: p.point, byRoad: true, roadClass: leg.roadClass),
                stale && !pending ? .route(reason: "throttle") : .none
            )
        }
        if case .route(let reason) = next {
            request(
                key, from: position, heading: fix.heading >= 0 ? fix.heading : nil, to: target, now: now, reason: reason
            )
        }
        if let travel { return travel }
        metrics.increment(
            "enroute_eta_fallback_total", labels: ["reason": "noRouteYet"],
            help: "ETAs computed in a straight line, by reason.")
        return Travel(seconds: fallback.travel(position, target), snapped: nil, byRoad: false)
    }

    /// The road time of a leg between two fixed points (a delivery's merchant to its customer), asked once.
    private func fixed(_ trip: String, _ from: Coordinate, _ to: Coordinate, now: Date) -> Travel {
        let key = LegKey(trip: trip, kind: .pickupToDropoff)
        let (known, ask): ((seconds: Double, roadClass: String)?, Bool) = state.withLock { s in
            if let leg = s.legs[key], leg.origin == from, leg.target == to {
                return ((leg.progress.durationSeconds, leg.roadClass), false)
            }
            return (nil, Self.due(s, key, now: now, interval: recomputeInterval))
        }
        if ask { request(key, from: from, heading: nil, to: to, now: now, reason: "start") }
        if let known { return Travel(seconds: known.seconds, snapped: nil, byRoad: true, roadClass: known.roadClass) }
        return Travel(seconds: fallback.travel(from, to), snapped: nil, byRoad: false)
    }

    /// True when a route for `key` may be asked for now: none in flight, and no failure in the last `interval`.
    private static func due(_ s: State, _ key: LegKey, now: Date, interval: TimeInterval) -> Bool {
        if s.pending.contains(key) { return false }
        if let failed = s.failedAt[key], now.timeIntervalSince(failed) < interval { return false }
        return true
    }

    /// Asks the road seam for `key`'s route in the background; when it arrives, the listeners hear of the trip.
    private func request(_ key: LegKey, from: Coordinate, heading: Double?, to: Coordinate, now: Date, reason: String) {
        let claimed = state.withLock { s in
            guard !s.pending.contains(key) else { return false }
            s.pending.insert(key)
            s.recomputes += 1
            return true
        }
        guard claimed else { return }
        metrics.increment(
            "enroute_route_recomputes_total", labels: ["reason": reason],
            help: "Road routes asked for trip ETAs, by reason.")
        let roads = self.roads
        spawn { [self] in
            let leg: RoadLeg
            do {
                leg = try await roads.route(from: from, to: to, heading: heading, departure: now)
            } catch {
                state.withLock { s in
                    s.pending.remove(key); s.failedAt[key] = now
                }
                metrics.increment(
                    "enroute_eta_fallback_total",
                    labels: ["reason": "\(error)".prefix(while: { $0 != "(" }).description],
                    help: "ETAs computed in a straight line, by reason.")
                log.warning(
                    "eta: no road route for trip \(key.trip) (\(key.kind.rawValue)): \(error); straight-line ETA kept")
                return
            }
            let listeners: [@Sendable (String) async -> Void] = state.withLock { s in
                s.pending.remove(key)
                s.failedAt[key] = nil
                var next = Leg(
                    origin: from, target: to, progress: RouteProgress(leg), computedAt: now, startedAt: now,
                    predictedSeconds: leg.durationSeconds, roadClass: leg.roadClass)
                // A leg keeps the baseline it started with across re-routes.
                if let old = s.legs[key], old.target == to {
                    next.startedAt = old.startedAt; next.predictedSeconds = old.predictedSeconds;
                    next.roadClass = old.roadClass
                }
                s.legs[key] = next
                return s.listeners
            }
            for listener in listeners { await listener(key.trip) }
        }
    }

    /// Drops the trip's legs other than `kept`.
    private func forget(_ trip: String, except kept: Set<LegKind>) {
        state.withLock { s in
            for kind in [LegKind.toPickup, .toDropoff, .pickupToDropoff] where !kept.contains(kind) {
                let key = LegKey(trip: trip, kind: kind)
                s.legs[key] = nil
                s.failedAt[key] = nil
            }
        }
    }

    // MARK: - Completed legs

    /// The legs a trip in `status` follows.
    static func legs(of status: TripStatus) -> Set<LegKind> {
        switch status {
        case .ride(.driverAssigned): [.toPickup]
        case .ride(.onTrip), .delivery(.onTheWay), .delivery(.arriving): [.toDropoff, .pickupToDropoff]
        case .delivery(.placed), .delivery(.picking): [.toPickup, .pickupToDropoff]
        default: []
        }
    }

    public func tripCommitted(from old: TripRecord?, to new: TripRecord, at: Date) {
        guard let old, old.status != new.status else { return }
        // The legs the new state no longer follows go once any sample they make is taken.
        defer { forget(new.id, except: Self.legs(of: new.status)) }
        let completed: LegKind?
        switch (old.status, new.status) {
        case (.ride(.driverAssigned), .ride(.driverArrived)): completed = .toPickup
        case (.ride(.onTrip), .ride(.completed)): completed = .toDropoff
        case (.delivery(.onTheWay), .delivery(.delivered)), (.delivery(.arriving), .delivery(.delivered)):
            completed = .toDropoff
        default: completed = nil
        }
        guard let completed else { return }
        let sample: EtaLegSample? = state.withLock { s in
            guard let leg = s.legs.removeValue(forKey: LegKey(trip: new.id, kind: completed)), leg.predictedSeconds > 0
            else { return nil }
            let sample = EtaLegSample(
                tripId: new.id, leg: completed.rawValue, roadClass: leg.roadClass,
                hourOfWeek: EtaCalibration.hourOfWeek(leg.startedAt, in: timeZone),
                predictedSeconds: leg.predictedSeconds, actualSeconds: at.timeIntervalSince(leg.startedAt),
                recordedAt: at)
            guard sample.actualSeconds > 0 else { return nil }
            s.calibration.add(sample)
            return sample
        }
        guard let sample else { return }
        let samples = self.samples, log = self.log
        spawn {
            do { try await samples.append(sample) } catch {
                log.warning("eta: could not keep a calibration sample: \(error)")
            }
        }
    }

    // MARK: - Estimates and coverage

    public func checkCovered(_ coordinate: Coordinate, pointer: String) async throws(TripError) {
        do {
            _ = try await roads.nearest(coordinate, heading: nil)
        } catch .noSegment {
            throw TripError.invalid(pointer: pointer, detail: Self.notCovered)
        } catch {
            // The router could not tell: the request goes ahead on straight lines.
            log.warning("eta: coverage of \(pointer) unknown: \(error)")
        }
    }

    /// The detail of a 422 for a position no road of the network is near.
    public static let notCovered = "is not near a road the service covers"

    /// How many of the nearest available providers a pickup wait asks road times for.
    public let pickupWaitCandidates = 5

    /// The straight-line estimates (for callers that cannot wait for the roads).
    public func estimates(pickup: Coordinate, dropoff: Coordinate) -> [Estimate] {
        fallback.estimates(pickup: pickup, dropoff: dropoff)
    }

    public func roadEstimates(
        pickup: Coordinate, dropoff: Coordinate, departure: Date
    ) async throws(TripError) -> [Estimate] {
        let leg = try await quoteLeg(pickup: pickup, dropoff: dropoff, departure: departure)
        return StraightLineEstimator.fares(
            km: leg.distanceMeters / 1000, minutes: leg.durationSeconds / 60, pickupWait: leg.pickupWaitSeconds,
            currency: fallback.currency)
    }

    public func quoteLeg(pickup: Coordinate, dropoff: Coordinate, departure: Date) async throws(TripError) -> QuoteLeg {
        let leg: RoadLeg
        do {
            leg = try await roads.routeSummary(from: pickup, to: dropoff, heading: nil, departure: departure)
        } catch .noSegment(let index) {
            throw TripError.invalid(pointer: index == 0 ? "/pickup" : "/dropoff", detail: Self.notCovered)
        } catch {
            metrics.increment(
                "enroute_eta_fallback_total", labels: ["reason": "estimate"],
                help: "ETAs computed in a straight line, by reason.")
            log.warning("eta: estimate in a straight line: \(error)")
            return QuoteLeg(
                distanceMeters: StraightLineEstimator.distance(pickup, dropoff) * fallback.detour,
                durationSeconds: fallback.travel(pickup, dropoff),
                pickupWaitSeconds: fallback.pickupWait)
        }
        var wait = fallback.pickupWait
        let nearby = await state.withLock { $0.nearby }?(pickup) ?? []
        if !nearby.isEmpty,
            let table = try? await roads.table(
                sources: Array(nearby.prefix(pickupWaitCandidates)), destinations: [pickup], departure: departure),
            let best = table.compactMap({ $0.first ?? nil }).map(\.durationSeconds).min()
        {
            wait = max(Int(minimumETA), Int(best.rounded(.up)))
        }
        return QuoteLeg(
            distanceMeters: leg.distanceMeters, durationSeconds: leg.durationSeconds, pickupWaitSeconds: wait)
    }
}
