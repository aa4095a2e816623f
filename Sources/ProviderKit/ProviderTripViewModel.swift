public import ClientKit
public import EnRouteModels
public import Foundation
public import Observation

/// What the trip screen's guidance needs: the route endpoint, the time, and the rules to follow by.
public struct GuidanceSource: Sendable {
    /// `GET /v1/provider/trips/{id}/route`.
    public let routes: any RouteFetching
    /// The time, for throttling route requests.
    public let dates: any DateProvider
    /// Off-route, arrival and throttle thresholds.
    public let rules: Guidance.Rules

    /// A source over `routes` on `dates`' time.
    public init(routes: any RouteFetching, dates: any DateProvider, rules: Guidance.Rules = Guidance.Rules()) {
        self.routes = routes; self.dates = dates; self.rules = rules
    }
}

/// The provider's trip screen over the outbox: a tap moves the screen on at once; answers arrive later from the sync
/// engine, and a refusal rolls the screen back to the real state with an explanation.
@MainActor @Observable
public final class ProviderTripViewModel {
    /// What the screen shows.
    public private(set) var state = ProviderTripViewState()

    @ObservationIgnored private let engine: StepSyncEngine
    @ObservationIgnored private var listening: Task<Void, Never>?
    @ObservationIgnored private let guidanceSource: GuidanceSource?
    @ObservationIgnored private var guide: Guidance?
    @ObservationIgnored private var fetching = false
    @ObservationIgnored private var lastFetch: Date?
    @ObservationIgnored private var lastFetchStop: RouteStop?
    @ObservationIgnored private var fetchFailures = 0

    static let storeFailedMessage = "The step couldn't be saved on this phone. Try again."

    /// A screen over `engine` and its outbox, with turn-by-turn guidance when `guidance` is given.
    public init(engine: StepSyncEngine, guidance: GuidanceSource? = nil) {
        self.engine = engine
        self.guidanceSource = guidance
    }

    /// Guides the trip on screen from the phone's new position: the first position (and the first after the next
    /// stop changes) fetches the route to that stop; later ones move along it, and leaving it fetches a new one
    /// (`Guidance`'s rule and throttle). A failed fetch waits `rules.rerouteInterval`, doubled per failure.
    public func locationChanged(_ fix: LocationFix) async {
        guard let source = guidanceSource else { return }
        guard let trip = state.trip, let stop = Self.nextStop(trip) else { clearGuidance(); return }
        let now = source.dates.now()
        let heading = fix.speed >= 1 ? fix.heading : nil
        if var current = guide, current.route.tripId == trip.id, current.route.stop == stop {
            let action = current.update(position: fix.coordinate, heading: heading, accuracy: fix.accuracy, at: now)
            guide = current
            state.guidance = current.progress
            if case .reroute(let from, let heading) = action {
                await fetchRoute(trip.id, from: from, heading: heading, source: source)
            }
            return
        }
        guard !fetching, fix.accuracy <= source.rules.worstAccuracy else { return }
        // A new stop is asked for at once; the same stop again (after a failure, or when the server answered for
        // another stop because a step is still on its way) only after the pause.
        if let last = lastFetch, lastFetchStop == stop || fetchFailures > 0 {
            let pause = min(
                source.rules.maximumRerouteInterval,
                source.rules.rerouteInterval * pow(2, Double(max(0, fetchFailures - 1))))
            guard now.timeIntervalSince(last) >= pause else { return }
        }
        lastFetch = now
        lastFetchStop = stop
        await fetchRoute(trip.id, from: fix.coordinate, heading: heading, source: source)
    }

    /// The stop the provider drives to next, from the status on screen; nil once the trip is over.
    static func nextStop(_ trip: LocalTrip) -> RouteStop? {
        switch (trip.server.kind, trip.displayedStatus) {
        case ("ride", "searching"), ("ride", "driverAssigned"), ("delivery", "placed"), ("delivery", "picking"): .pickup
        case ("ride", "driverArrived"), ("ride", "onTrip"), ("delivery", "onTheWay"), ("delivery", "arriving"): .dropoff
        default: nil
        }
    }

    private func fetchRoute(_ tripID: String, from: Coordinate, heading: Double?, source: GuidanceSource) async {
        fetching = true
        defer { fetching = false }
        do {
            let route = try await source.routes.route(trip: tripID, from: from, heading: heading)
            guard state.trip?.id == tripID else { return }
            fetchFailures = 0
            if var current = guide, current.route.tripId == tripID, current.route.stop == route.stop {
                current.rerouted(route)
                guide = current
            } else {
                guide = Guidance(route: route, rules: source.rules)
            }
            state.guidance = guide?.progress
        } catch {
            fetchFailures += 1
            if var current = guide, current.route.tripId == tripID {
                current.rerouteFailed(at: source.dates.now())
                guide = current
            }
        }
    }

    private func clearGuidance() {
        guide = nil
        state.guidance = nil
    }

    /// Shows the local trips as the store has them (after a launch, they include unsent steps).
    public func load() {
        show((try? engine.outbox.trips())?.first, notice: state.notice)
    }

    /// Reports the next step (or `step`) on the trip on screen; the screen moves on before anything is sent. A
    /// `delivered` step names its proof by `proofId`, the id `ProofCaptureQueue.capture` returned.
    public func reportStep(_ step: ProviderStep? = nil, proofId: String? = nil) {
        guard let trip = state.trip, let step = step ?? state.nextStep else { return }
        do {
            let (_, local) = try engine.reportStep(step, on: trip.server, proofId: proofId)
            show(local, notice: nil)
        } catch {
            state.notice = Self.storeFailedMessage
        }
    }

    /// Takes a trip the server sent (an accepted offer, a `tripUpdated` event, the active list).
    public func receive(_ trip: TripSnapshot) {
        guard let local = try? engine.outbox.receive(trip) else { return }
        if state.trip == nil || state.trip?.id == trip.id || ProviderStep.isFinished(state.trip?.displayedStatus ?? "")
        {
            show(local, notice: state.trip?.id == trip.id ? state.notice : nil)
        }
    }

    /// Follows the sync engine's answers until `stop()`.
    public func start() async {
        let events = await engine.events()
        listening?.cancel()
        listening = Task { [weak self] in
            for await event in events {
                guard let self else { return }
                self.handle(event)
            }
        }
    }

    /// Stops following the engine.
    public func stop() {
        listening?.cancel()
        listening = nil
    }

    /// Applies one engine event to the screen.
    func handle(_ event: StepSyncEngine.Event) {
        switch event {
        case .applied(_, let trip):
            if state.trip?.id == trip.id { show(trip, notice: state.notice) }
        case .rejected(_, let trip, let notice, _):
            if state.trip?.id == trip.id || state.trip == nil { show(trip, notice: notice) }
        case .dropped(let change, let reason):
            if state.trip?.id == change.tripId, let trip = try? engine.outbox.trip(change.tripId) {
                show(trip, notice: "“\(StepRejectionNotice.label(change.step))” could not be recorded: \(reason)")
            }
        case .willRetry:
            break
        }
    }

    private func show(_ trip: LocalTrip?, notice: String?) {
        // Guidance is for one trip's one stop: a step that changes the stop drops it until the next position.
        if let guide, trip?.id != guide.route.tripId || trip.flatMap(Self.nextStop) != guide.route.stop {
            clearGuidance()
        }
        state.trip = trip
        state.nextStep = trip.flatMap {
            ProviderStep.next(
                afterStatus: $0.displayedStatus, kind: $0.server.kind, merchantStep: $0.server.merchantStep)
        }
        state.notice = notice
    }
}
