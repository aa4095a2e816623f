import Foundation
import ClientKit
import HTTPTransport
import CurlTransport
import EnRouteModels
import ProviderKit

/// `enroute drive`: a terminal provider built on ProviderKit. It goes online, takes offers, drives the server's road
/// route to each stop (a scripted line when the server has no roads) feeding the point buffer, and reports each step
/// through the outbox, printing what happens and the guidance it would give.
@MainActor
enum DriveCommand {
    nonisolated static let spec = CommandSpec(
        name: "drive",
        synopsis: """
            Usage: enroute drive --token T [--server URL] [--route LAT,LNG;LAT,LNG;...] [--speed M/S] [options]

            A terminal driver or courier on the provider kit: goes online, accepts offers, drives to the pickup \
            and on to the
            drop-off at a steady speed along the server's road route (GET /v1/provider/trips/{id}/route, printing each
            maneuver as guidance), and reports each step (arrived, picked up, dropped off / delivered). Positions go
            through the point buffer and steps through the outbox, both in a local SQLite file, exactly as \
            the app does: a
            step is never lost, whatever the network does, and unsent ones are sent on the next start.
            """,
        sections: [
            (
                nil,
                Terminal.serverOptions(role: "provider") + [
                    .value(
                        "route", "PTS",
                        """
                        Waypoints driven between the pickup and the drop-off when the server has no road
                        network, `LAT,LNG;LAT,LNG;...` (quote it: `;` ends a shell command). Without roads
                        and without it, the car drives straight lines.
                        """),
                    .value("speed", "M/S", "Driving speed in metres per second (default 12, about 43 km/h)."),
                    .value(
                        "start", "LAT,LNG",
                        """
                        Where the provider waits when going online (default the first --route point, else
                        central Helsinki).
                        """),
                    .value(
                        "store", "PATH",
                        "The device store: point buffer and step outbox (default ./enroute-drive.sqlite)."),
                    .value("decline", "N", "Decline the first N offers, to watch dispatch move on (default 0)."),
                    .flag("once", "Exit after one trip has finished."),
                ]
            )
        ],
        footer: """
            Ctrl-C (or SIGTERM) goes offline, tries once more to send buffered positions and steps, and exits.
            """)

    static func run(_ args: [String]) async throws -> Int32 {
        let options = try spec.parse(args)
        if options.has("help") { print(spec.helpText); return 0 }
        // The same --server default (http://127.0.0.1:8080) and token check as `track` and `ride`.
        let (baseURL, token) = try Terminal.server(options)
        var waypoints: [Coordinate] = []
        if let text = options.string("route") {
            guard let parsed = ScriptedRoute.parse(text) else {
                throw CLIError("--route must be LAT,LNG;LAT,LNG;... with valid coordinates")
            }
            waypoints = parsed
        }
        let speed = try options.double("speed", in: 0.1...100) ?? 12
        var start = waypoints.first ?? Coordinate(lat: 60.1699, lng: 24.9384)
        if let text = options.string("start") {
            guard let point = ScriptedRoute.parse(text), point.count == 1 else {
                throw CLIError("--start must be LAT,LNG")
            }
            start = point[0]
        }
        let declines = try options.int("decline", in: 0...Int.max) ?? 0
        let storePath = options.string("store") ?? "./enroute-drive.sqlite"

        let driver = try Driver(
            server: APIServer(baseURL: baseURL, credentials: StaticAccessToken(token)), storePath: storePath,
            waypoints: waypoints, speed: speed, start: start, declines: declines, once: options.has("once"))
        return await driver.run()
    }

    /// The composition root and the shift's loop.
    @MainActor
    private final class Driver {
        let api: RemoteProviderAPI
        let clock = ContinuousClock()
        let dates = SystemDateProvider()
        let store: ProviderStore
        let buffer: PointBuffer
        let engine: StepSyncEngine
        let uploader: LocationUploader
        let session: ProviderSession
        let planner: LegPlanner
        let waypoints: [Coordinate]
        let speed: Double
        let once: Bool
        let storePath: String
        var position: Coordinate
        var heading: Double?
        var declinesLeft: Int
        var driving: Task<Void, Never>?
        var drivingTripID: String?
        var lastShown: [String: String] = [:]
        var finished: AsyncStream<Void>.Continuation?

        init(
            server: APIServer, storePath: String, waypoints: [Coordinate], speed: Double, start: Coordinate,
            declines: Int, once: Bool
        ) throws {
            api = RemoteProviderAPI(client: CurlHTTPClient(), server: server)
            store = try ProviderStore(path: storePath)
            let makeID: @Sendable () -> String = { UUID().uuidString.lowercased() }
            buffer = try PointBuffer(store: store, makeID: makeID)
            let outbox = StepOutbox(store: store, positions: buffer, dates: dates, makeID: makeID)
            engine = StepSyncEngine(outbox: outbox, api: api, clock: clock)
            uploader = LocationUploader(buffer: buffer, api: api, clock: clock)
            session = ProviderSession(api: api, clock: clock)
            planner = LegPlanner(routes: api)
            self.waypoints = waypoints
            self.speed = speed
            self.once = once
            self.storePath = storePath
            self.position = buffer.lastKeptFix?.coordinate ?? start
            self.declinesLeft = declines
        }

        func run() async -> Int32 {
            let stop = AsyncStream<Int32>.makeStream()
            SignalCatcher.start([SIGINT, SIGTERM], into: stop.continuation)
            let done = AsyncStream<Void>.makeStream()
            finished = done.continuation

            let pending = (try? engine.outbox.pending().count) ?? 0
            let buffered = (try? buffer.count()) ?? 0
            log("store \(pending) unsent steps, \(buffered) unsent positions; starting at \(Self.text(position))")
            let background = startBackgroundWork()
            await goOnline()
            let feed = Task { await self.followFeed() }
            let heartbeat = Task { await self.reportWhileIdle() }

            // Ctrl-C, SIGTERM, or the end of the one trip (--once).
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    var it = stop.stream.makeAsyncIterator(); _ = await it.next()
                }
                group.addTask {
                    var it = done.stream.makeAsyncIterator(); _ = await it.next()
                }
                await group.next()
                group.cancelAll()
            }
            log("going offline")
            feed.cancel()
            heartbeat.cancel()
            driving?.cancel()
            do { try await session.goOffline() } catch { log("could not go offline: \(error)") }
            await uploader.flush()
            await engine.drain()
            for task in background { task.cancel() }
            let left = (try? engine.outbox.pending().count) ?? 0
            if left > 0 { log("\(left) steps stay in \(storePath) and go out on the next start") }
            store.close()
            return 0
        }

        private func startBackgroundWork() -> [Task<Void, Never>] {
            let engine = self.engine, uploader = self.uploader
            let engineEvents = Task { @MainActor in
                for await event in await engine.events() { self.show(event) }
            }
            let uploads = Task { @MainActor in
                for await report in await uploader.reportStream()
                where !report.acknowledged.isEmpty || report.failure != nil || !report.discarded.isEmpty {
                    let accepted = report.acknowledged.map(\.accepted).reduce(0, +)
                    let dropped = report.acknowledged.map(\.dropped).reduce(0, +)
                    if let failure = report.failure {
                        self.log("positions: upload failed (\(failure)); kept for the next try")
                    }
                    if !report.acknowledged.isEmpty {
                        self.log(
                            "positions: \(report.acknowledged.count) batch(es), \(accepted) kept, \(dropped) dropped "
                                + "by the server"
                        )
                    }
                }
            }
            return [Task { await engine.run() }, Task { await uploader.run() }, engineEvents, uploads]
        }

        private func goOnline() async {
            var failures = 0
            while !Task.isCancelled {
                do {
                    try await session.goOnline(at: position)
                    log("online at \(Self.text(position))")
                    return
                } catch {
                    failures += 1
                    let pause = SyncBackoff(initial: .seconds(1), maximum: .seconds(30)).delay(
                        afterFailures: failures, error: error)
                    log("could not go online (\(error)); again in \(pause)")
                    try? await clock.sleep(for: pause)
                }
            }
        }

        private func followFeed() async {
            var wasDisconnected = false
            for await update in session.updates() {
                if case .event = update, wasDisconnected {
                    // The server is reachable again: send waiting steps now rather than after the retry pause.
                    wasDisconnected = false
                    log("event feed back")
                    engine.requestRun()
                }
                switch update {
                case .event(.offer(let offer)): await handle(offer)
                case .event(.offerWithdrawn(let gone)): log("offer \(gone.offerId) withdrawn")
                case .event(.tripUpdated(let trip)): receive(trip)
                case .disconnected(let reason, let pause):
                    wasDisconnected = true
                    log("event feed lost (\(reason)); reconnecting in \(pause)")
                }
            }
        }

        private func handle(_ offer: Offer) async {
            let card = OfferViewModel(offer: offer, api: api, clock: clock, dates: dates)
            log(
                "offer \(offer.offerId): trip \(offer.tripId) from \(Self.text(offer.pickup)) to "
                    + "\(Self.text(offer.dropoff)), \(card.state.secondsLeft) s to answer"
            )
            if drivingTripID != nil || declinesLeft > 0 {
                declinesLeft = max(0, declinesLeft - 1)
                await card.decline()
                log("declined offer \(offer.offerId)")
                return
            }
            await card.accept()
            switch card.state.phase {
            case .accepted(let trip):
                log("accepted: trip \(trip.id) is ours (\(trip.kind), \(trip.status))")
                receive(trip)
            default:
                log("offer \(offer.offerId) not taken: \(card.state.message ?? "\(card.state.phase)")")
            }
        }

        /// A trip from the server; starts driving it when it is ours, active and not yet driven.
        private func receive(_ trip: TripSnapshot) {
            _ = try? engine.outbox.receive(trip)
            let shown = trip.status + (trip.merchantStep.map { "/\($0)" } ?? "")
            if lastShown[trip.id] != shown {
                lastShown[trip.id] = shown
                log("trip \(trip.id): \(trip.status)\(trip.merchantStep.map { " (merchant: \($0))" } ?? "")")
            }
            guard drivingTripID == nil, !ProviderStep.isFinished(trip.status) else { return }
            drivingTripID = trip.id
            driving = Task { await self.drive(trip.id) }
        }

        private func show(_ event: StepSyncEngine.Event) {
            switch event {
            case .applied(let change, let trip):
                log(
                    "step \(change.step.rawValue) applied (trip \(trip.id) now \(trip.server.status), "
                        + "v\(trip.server.version))"
                )
            case .rejected(let change, _, let notice, let discarded):
                log(
                    "step \(change.step.rawValue) rejected: \(notice)"
                        + (discarded.isEmpty ? "" : " (\(discarded.count) later steps dropped)"))
            case .dropped(let change, let reason):
                log("step \(change.step.rawValue) dropped: \(reason)")
            case .willRetry(let change, let pause, let reason):
                log("step \(change.step.rawValue) not sent (\(reason)); kept, retrying in \(pause)")
            }
        }

        /// Drives the trip step by step from what the screen shows, so a restart resumes where it stopped.
        private func drive(_ tripID: String) async {
            await uploader.setOnTrip(true)
            defer {
                drivingTripID = nil
                Task { await self.uploader.setOnTrip(false) }
            }
            while !Task.isCancelled {
                guard let trip = currentTrip(tripID) else { return }
                if ProviderStep.isFinished(trip.displayedStatus) || ProviderStep.isFinished(trip.server.status) {
                    log(
                        "trip \(tripID) finished: "
                            + (trip.server.status == trip.displayedStatus
                                ? trip.displayedStatus : "\(trip.displayedStatus) (server: \(trip.server.status))")
                    )
                    if once { finished?.yield() }
                    return
                }
                guard
                    let step = ProviderStep.next(
                        afterStatus: trip.displayedStatus, kind: trip.server.kind,
                        merchantStep: trip.server.merchantStep)
                else {
                    // A delivery before the merchant marked it ready: go to the merchant and wait there.
                    if await driveLeg(to: .pickup, of: trip) == false { return }
                    guard let latest = currentTrip(tripID) else { return }
                    if latest.server.version == trip.server.version {
                        log("waiting at the merchant for the order to be ready")
                        await waitForChange(tripID, from: latest.server.version)
                    }
                    continue
                }
                let arrived: Bool
                switch step {
                case .driverArrived:
                    arrived = await driveLeg(to: .pickup, of: trip)
                case .onTrip:
                    try? await clock.sleep(for: .seconds(3))  // the passenger gets in
                    arrived = !Task.isCancelled
                case .completed:
                    arrived = await driveLeg(to: .dropoff, of: trip, via: waypoints)
                case .delivered:
                    arrived = await driveLeg(to: .dropoff, of: trip)
                case .onTheWay:
                    arrived = await driveLeg(to: .pickup, of: trip)
                case .arriving:
                    // "Arriving" goes out 150 m before the door.
                    let leg = await plan(to: .dropoff, of: trip, via: waypoints)
                    arrived = await driveLeg(leg, until: max(0, leg.path.length - 150), trip: tripID)
                case .cancelled:
                    arrived = false
                }
                guard arrived, !Task.isCancelled else { return }
                log("reporting \(step.rawValue) (“\(StepRejectionNotice.label(step))”)")
                do {
                    try engine.reportStep(step, on: trip.server)
                } catch {
                    log("could not save the step on this device: \(error)")
                    return
                }
            }
        }

        private func currentTrip(_ id: String) -> LocalTrip? {
            (try? engine.outbox.trip(id)) ?? nil
        }

        private func waitForChange(_ tripID: String, from version: Int) async {
            var waited = 0
            while !Task.isCancelled, (currentTrip(tripID)?.server.version ?? version) == version {
                try? await clock.sleep(for: .seconds(1))
                waited += 1
                // The feed normally brings the change; ask now and then in case it is down.
                if waited % 10 == 0, let trips = try? await api.activeTrips() { trips.forEach(receive) }
            }
        }

        private func driveLeg(to stop: RouteStop, of trip: LocalTrip, via: [Coordinate] = []) async -> Bool {
            let leg = await plan(to: stop, of: trip, via: via)
            return await driveLeg(leg, until: leg.path.length, trip: trip.id)
        }

        /// The leg to `stop`: the server's road route from here, else the scripted line (said once per leg).
        private func plan(to stop: RouteStop, of trip: LocalTrip, via: [Coordinate]) async -> LegPlanner.Leg {
            let destination = stop == .pickup ? trip.server.pickup : trip.server.dropoff
            let leg = await planner.leg(
                trip: trip.id, from: position, heading: heading, to: stop, at: destination, scripted: via)
            switch leg.source {
            case .road(let route):
                log(
                    "route to the \(stop.rawValue): \(Guidance.distanceText(route.distanceMeters)) on the roads, about "
                        + "\(Int((route.durationSeconds / 60).rounded(.up))) min, \(route.steps.count) steps"
                )
            case .scripted(let reason):
                log(
                    "route to the \(stop.rawValue): a straight line of \(Guidance.distanceText(leg.path.length)) "
                        + "(\(reason))"
                )
            }
            return leg
        }

        /// Moves along the leg once a second at `speed`, feeding the point buffer and printing each new maneuver as
        /// guidance would say it; false if stopped or the trip ended.
        private func driveLeg(_ leg: LegPlanner.Leg, until distance: Double, trip: String) async -> Bool {
            var guidance: Guidance?
            if case .road(let route) = leg.source { guidance = Guidance(route: route) }
            var announced: RouteManeuver?
            var travelled = 0.0
            while travelled < distance {
                do { try await clock.sleep(for: .seconds(1)) } catch { return false }
                if let current = currentTrip(trip), ProviderStep.isFinished(current.server.status) { return false }
                travelled = min(distance, travelled + speed)
                let (point, heading) = leg.path.position(atDistance: travelled)
                record(point, heading: heading, speed: speed)
                if var g = guidance {
                    _ = g.update(position: point, heading: heading, accuracy: 5, at: dates.now())
                    guidance = g
                    if let next = g.progress.nextManeuver, next != announced {
                        announced = next
                        log("guidance: \(g.progress.instruction)")
                    }
                }
            }
            return true
        }

        /// While idle, reports where the provider stands every few seconds, so dispatch knows.
        private func reportWhileIdle() async {
            while !Task.isCancelled {
                do { try await clock.sleep(for: .seconds(6)) } catch { return }
                if drivingTripID == nil { record(position, heading: 0, speed: 0) }
            }
        }

        private func record(_ point: Coordinate, heading: Double, speed: Double) {
            position = point
            self.heading = speed >= 1 ? heading : nil
            let fix = LocationFix(
                lat: point.lat, lng: point.lng, heading: heading, speed: speed, accuracy: 5, recordedAt: dates.now())
            do { try buffer.record(fix) } catch { log("could not buffer a position: \(error)") }
        }

        func log(_ message: String) {
            let time = ISO8601.format(dates.now()).dropFirst(11).prefix(8)
            FileHandle.standardOutput.write(Data("[\(time)] \(message)\n".utf8))
        }

        static func text(_ point: Coordinate) -> String {
            String(format: "%.5f,%.5f", point.lat, point.lng)
        }
    }
}
