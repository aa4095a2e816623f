import Foundation
import HTTPTransport
import EnRouteModels
import ProviderKit

/// One driver or courier on ProviderKit, as `enroute drive` is: online through the session, offers answered after a
/// human reaction time, the router's guidance driven at the speed model's real speeds with GPS noise on each fix,
/// positions through the point buffer and steps through the outbox, over a network with the run's faults. A courier
/// carrying an order takes a stacked offer (one with `stops`) like any other and drives the plan over both orders.
@MainActor
final class SimulatedProvider {
    let id: String
    private let context: SimulationContext
    private let network: FaultyHTTPClient
    private let api: RemoteProviderAPI
    private let store: ProviderStore
    private let buffer: PointBuffer
    private let engine: StepSyncEngine
    private let uploader: LocationUploader
    private let session: ProviderSession
    private let planner: LegPlanner
    private var random: SeededGenerator
    private var noise: GPSNoise
    private var position: Coordinate
    private var heading: Double?
    /// The drive over the trips carried; nil while idle.
    private var driving: Task<Void, Never>?
    /// The trips carried (one ride, or one or more orders), in the order taken.
    private var carried: [String] = []
    /// The latest planned route over the orders carried: a stacked offer's, then the trimmed one of a later snapshot.
    private var plan: [PlannedStop]?
    /// An order joined or the plan changed: the leg under way checks whether its stop is still the next one.
    private var planChanged = false
    /// Trips this provider was assigned, and those whose pickup it has not reached yet, with the metres driven on legs
    /// to that pickup so far.
    private var assigned: Set<String> = []
    private var approaches: [String: Double] = [:]
    private var background: [Task<Void, Never>] = []

    /// Fix cadence while driving, in simulated seconds.
    static let tick = 3.0

    init(id: String, start: Coordinate, context: SimulationContext) throws {
        self.id = id
        self.context = context
        network = context.network(for: id)
        api = RemoteProviderAPI(client: network, server: try context.server(id, .provider))
        store = try ProviderStore(path: context.storeDirectory.appendingPathComponent("\(id).sqlite").path)
        var ids = SeededGenerator(seed: context.seed, stream: "ids:" + id)
        let counter = IDCounter(prefix: id, salt: ids.next())
        let makeID: @Sendable () -> String = { counter.next() }
        buffer = try PointBuffer(store: store, makeID: makeID)
        let outbox = StepOutbox(store: store, positions: buffer, dates: context.dates, makeID: makeID)
        engine = StepSyncEngine(outbox: outbox, api: api, clock: context.clock)
        uploader = LocationUploader(buffer: buffer, api: api, clock: context.clock)
        session = ProviderSession(api: api, clock: context.clock)
        planner = LegPlanner(routes: api)
        random = SeededGenerator(seed: context.seed, stream: "provider:" + id)
        noise = GPSNoise(sigmaMeters: 4, generator: SeededGenerator(seed: context.seed, stream: "gps:" + id))
        position = start
    }

    /// Works the shift until the calling task is cancelled.
    func run() async {
        let engine = self.engine, uploader = self.uploader, log = context.log
        background = [
            Task { await engine.run() },
            Task { await uploader.run() },
            Task { @MainActor in
                for await event in await engine.events() {
                    if case .applied(let change, _) = event {
                        log.record { $0.acknowledgedSteps[change.tripId, default: []].append(change.changeId) }
                    }
                }
            },
            Task {
                for await report in await uploader.reportStream() {
                    let accepted = report.acknowledged.map(\.accepted).reduce(0, +)
                    log.record { seen in
                        seen.fixesAccepted += accepted
                        if report.failure != nil { seen.uploadFailures += 1 }
                    }
                }
            },
        ]
        guard await goOnline() else { return }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.followFeed() }
            group.addTask { await self.reportWhileIdle() }
            await group.waitForAll()
        }
    }

    /// With faults off: sends what the point buffer and the outbox still hold (a drain already running in the
    /// engine's own loop, or a request that timed out on a busy machine, is waited out for up to a simulated minute),
    /// then notes what could not go.
    func finish() async {
        driving?.cancel()
        _ = await uploader.flush()
        for _ in 0..<60 {
            engine.requestRun()
            _ = await engine.drain()
            if ((try? engine.outbox.pending().count) ?? 0) == 0 { break }
            guard await context.pause(1) else { break }
        }
        let left = (try? engine.outbox.pending().count) ?? 0
        context.log.record { $0.unsentSteps += left }
        try? await session.goOffline()
        for task in background { task.cancel() }
        store.close()
    }

    private func goOnline() async -> Bool {
        var failures = 0
        while !Task.isCancelled {
            do { try await session.goOnline(at: position); return true } catch {
                failures += 1
                let pause = SyncBackoff(initial: .seconds(1), maximum: .seconds(30)).delay(
                    afterFailures: failures, error: error)
                do { try await context.clock.sleep(for: pause, tolerance: nil) } catch { return false }
            }
        }
        return false
    }

    private func followFeed() async {
        var wasDisconnected = false
        for await update in session.updates() {
            if Task.isCancelled { return }
            if case .event = update, wasDisconnected {
                wasDisconnected = false
                engine.requestRun()
            }
            switch update {
            case .event(.offer(let offer)):
                let card = OfferViewModel(offer: offer, api: api, clock: context.clock, dates: context.dates)
                Task { await self.answer(card) }
            case .event(.offerWithdrawn): break
            case .event(.tripUpdated(let trip)): receive(trip)
            case .disconnected: wasDisconnected = true
            }
        }
    }

    /// A person reads the offer (2–14 s, now and then longer than the offer lasts) and takes it, unless busy with a
    /// trip and the offer is not stacked on it, or (one time in ten) not minded to.
    private func answer(_ card: OfferViewModel) async {
        context.log.record { $0.offersReceived += 1 }
        let countdown = Task { await card.runCountdown() }
        defer { countdown.cancel() }
        let draw = random.unit()
        let reaction = draw < 0.04 ? 16 + 10 * random.unit() : 2 + 12 * random.unit()
        let offer = card.state.offer
        let declines = (driving != nil && offer.stops == nil) || random.unit() < 0.1
        guard await context.pause(reaction) else { return }
        guard card.state.canAnswer else {
            if card.state.phase == .expired || card.state.secondsLeft <= 0 {
                context.log.record { $0.offersExpired += 1 }
            }
            return
        }
        if declines {
            await card.decline()
            context.log.record { $0.offersDeclined += 1 }
            return
        }
        await card.accept()
        if case .accepted(let trip) = card.state.phase {
            context.log.record { $0.offersAccepted += 1 }
            if let stops = offer.stops {
                var carried: [String] = []
                for stop in stops where stop.tripId != trip.id && !carried.contains(stop.tripId) {
                    carried.append(stop.tripId)
                }
                let stacked = SimulationObservations.StackedOffer(addedSeconds: offer.addedSeconds, carried: carried)
                context.log.record { $0.stackedOffers[trip.id] = stacked }
                takePlan(stops)
            }
            receive(trip)
        }
    }

    /// Takes a trip the server sent: an unfinished one of this provider's joins those carried (a stacked order
    /// beside the one under way), and a drive starts when none is under way.
    private func receive(_ trip: TripSnapshot) {
        _ = try? engine.outbox.receive(trip)
        guard trip.providerId == nil || trip.providerId == id else { return }
        if let stops = trip.stops { takePlan(stops) }
        guard !ProviderStep.isFinished(trip.status) else { return }
        if trip.providerId == id, assigned.insert(trip.id).inserted {
            let assignment = SimulationObservations.Assignment(
                requestedAt: trip.createdAt, assignedAt: context.dates.now())
            context.log.record { $0.assignments[trip.id] = $0.assignments[trip.id] ?? assignment }
            approaches[trip.id] = 0
        }
        if !carried.contains(trip.id) {
            carried.append(trip.id)
            planChanged = true
        }
        if driving == nil { driving = Task { await self.drivePlan() } }
    }

    private func takePlan(_ stops: [PlannedStop]) {
        guard stops != plan else { return }
        plan = stops
        planChanged = true
    }

    /// The approach to `tripID`'s pickup ends: reached (`at` the moment) or abandoned (nil); the metres are noted.
    private func endApproach(_ tripID: String, at arrival: Date?) {
        guard let metres = approaches.removeValue(forKey: tripID) else { return }
        context.log.record {
            $0.assignments[tripID]?.approachMetres = metres
            $0.assignments[tripID]?.atPickup = arrival
        }
    }

    private func currentTrip(_ id: String) -> LocalTrip? { (try? engine.outbox.trip(id)) ?? nil }

    /// The stop to drive to next over the trips carried.
    private func nextTarget() -> CourierRoute.Target? {
        CourierRoute.next(plan: plan, trips: carried.compactMap(currentTrip))
    }

    /// True when a changed plan or a new order moved the next stop away from `target` (checked once per change).
    private func replanned(from target: CourierRoute.Target) -> Bool {
        guard planChanged else { return false }
        planChanged = false
        return nextTarget() != target
    }

    /// What became of one step towards a target.
    private enum Advance { case moved, replanned, gaveUp }

    /// Every trip carried, stop by stop from what the screen shows (DriveCommand's loop over the planned route): the
    /// trip of the next stop moves on one step; an order that ends, or that this provider gives up, drops out.
    private func drivePlan() async {
        await uploader.setOnTrip(true)
        defer {
            for tripID in carried { endApproach(tripID, at: nil) }
            carried = []
            driving = nil
            Task { await self.uploader.setOnTrip(false) }
        }
        while !Task.isCancelled {
            planChanged = false
            for tripID in carried where currentTrip(tripID).flatMap(CourierRoute.stop(of:)) == nil { drop(tripID) }
            guard let target = nextTarget(), let trip = currentTrip(target.tripId) else { return }
            if await advance(trip, toward: target) == .gaveUp { drop(trip.id) }
        }
    }

    /// `tripID` leaves the trips carried (over, or given up); an approach under way to its pickup is abandoned.
    private func drop(_ tripID: String) {
        endApproach(tripID, at: nil)
        carried.removeAll { $0 == tripID }
    }

    /// One step of `trip`, driven to `target` (its own next stop) first when the step needs it.
    private func advance(_ trip: LocalTrip, toward target: CourierRoute.Target) async -> Advance {
        let tripID = trip.id
        guard
            let step = ProviderStep.next(
                afterStatus: trip.displayedStatus, kind: trip.server.kind, merchantStep: trip.server.merchantStep)
        else {
            // A delivery not yet ready: drive to the merchant and wait there.
            let leg = await driveLeg(to: .pickup, of: trip, target: target)
            guard leg == .moved else { return leg }
            endApproach(tripID, at: context.dates.now())
            await waitForChange(tripID, from: trip.server.version, target: target)
            return .moved
        }
        let leg: Advance
        switch step {
        case .driverArrived, .onTheWay:
            leg = await driveLeg(to: .pickup, of: trip, target: target)
            if leg == .moved { endApproach(tripID, at: context.dates.now()) }
        case .onTrip:
            leg = await context.pause(20 + 40 * random.unit()) ? .moved : .gaveUp  // the passenger gets in
        case .completed, .delivered:
            leg = await driveLeg(to: .dropoff, of: trip, target: target)
            if leg == .moved {
                let now = context.dates.now()
                context.log.record { $0.doorArrivals[tripID] = now }
            }
        case .arriving:
            let route = await planner.leg(
                trip: trip.id, from: position, heading: heading, to: .dropoff, at: trip.server.dropoff)
            leg = await driveLeg(route, until: max(0, route.path.length - 150), target: target)
        case .cancelled:
            leg = .gaveUp
        }
        guard leg == .moved, !Task.isCancelled else { return leg }
        return (try? engine.reportStep(step, on: trip.server)) != nil ? .moved : .gaveUp
    }

    /// Waits at the pickup until the trip changes, or a new plan sends the provider elsewhere.
    private func waitForChange(_ tripID: String, from version: Int, target: CourierRoute.Target) async {
        var waited = 0
        while !Task.isCancelled, (currentTrip(tripID)?.server.version ?? version) == version, !replanned(from: target) {
            guard await context.pause(2) else { return }
            waited += 2
            if waited % 20 == 0, let trips = try? await api.activeTrips() { trips.forEach(receive) }
        }
    }

    private func driveLeg(to stop: RouteStop, of trip: LocalTrip, target: CourierRoute.Target) async -> Advance {
        let destination = stop == .pickup ? trip.server.pickup : trip.server.dropoff
        let leg = await planner.leg(trip: trip.id, from: position, heading: heading, to: stop, at: destination)
        return await driveLeg(leg, until: leg.path.length, target: target)
    }

    /// Drives the leg at the real speed (the router's average × the road's factor × the hour's), one fix per tick;
    /// `.replanned` when the plan sends the provider to another stop first, `.gaveUp` when the trip ended meanwhile
    /// (or the run did).
    private func driveLeg(_ leg: LegPlanner.Leg, until distance: Double, target: CourierRoute.Target) async -> Advance {
        let trip = target.tripId
        var routerSpeed = 9.0
        var guidance: Guidance?
        if case .road(let route) = leg.source {
            guidance = Guidance(route: route)
            if route.durationSeconds > 0, route.distanceMeters > 0 {
                routerSpeed = route.distanceMeters / route.durationSeconds
            }
        }
        let points = leg.path.waypoints
        var cumulative: [Double] = [0]
        for i in 1..<max(points.count, 1) { cumulative.append(cumulative[i - 1] + points[i - 1].metres(to: points[i])) }
        var travelled = 0.0, segment = 0
        while travelled < distance {
            guard await context.pause(Self.tick) else { return .gaveUp }
            if let current = currentTrip(trip), ProviderStep.isFinished(current.server.status) { return .gaveUp }
            if replanned(from: target) { return .replanned }
            while segment + 1 < cumulative.count - 1, cumulative[segment + 1] <= travelled { segment += 1 }
            let a = points[min(segment, points.count - 1)], b = points[min(segment + 1, points.count - 1)]
            let speed = context.speeds.speed(
                router: routerSpeed, from: a, to: b, hour: context.hour(context.dates.now()))
            let before = travelled
            travelled = min(distance, travelled + speed * Self.tick)
            if let metres = approaches[trip] { approaches[trip] = metres + travelled - before }
            let (point, direction) = leg.path.position(atDistance: travelled)
            record(point, heading: direction, speed: speed)
            if var g = guidance {
                _ = g.update(position: point, heading: direction, accuracy: 5, at: context.dates.now())
                guidance = g
            }
        }
        return .moved
    }

    /// While idle, where the provider waits, every 20 s, so dispatch knows.
    private func reportWhileIdle() async {
        while !Task.isCancelled {
            guard await context.pause(20) else { return }
            if driving == nil { record(position, heading: 0, speed: 0) }
        }
    }

    private func record(_ point: Coordinate, heading: Double, speed: Double) {
        position = point
        self.heading = speed >= 1 ? heading : nil
        let seen = noise.apply(to: point)
        let fix = LocationFix(
            lat: seen.lat, lng: seen.lng, heading: heading, speed: speed, accuracy: 5, recordedAt: context.dates.now())
        if (try? buffer.record(fix)) != nil { context.log.record { $0.fixesRecorded += 1 } }
    }
}

/// Deterministic ids for one device: its name, a seeded salt, a counter.
final class IDCounter: Sendable {
    private let prefix: String
    private let salt: UInt64
    private let count = Locked<Int>(0)
    init(prefix: String, salt: UInt64) { self.prefix = prefix; self.salt = salt }
    func next() -> String {
        let n = count.withLock {
            $0 += 1; return $0
        }
        return "\(prefix)-\(String(salt % 1_000_000, radix: 36))-\(n)"
    }
}
