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
    @ObservationIgnored private var lastFetchTarget: Target?
    @ObservationIgnored private var fetchFailures = 0

    static let storeFailedMessage = "The step couldn't be saved on this phone. Try again."

    /// A screen over `engine` and its outbox, with turn-by-turn guidance when `guidance` is given.
    public init(engine: StepSyncEngine, guidance: GuidanceSource? = nil) {
        self.engine = engine
        self.guidanceSource = guidance
    }

    /// The stop guidance leads to: a trip (the one on screen, or another order the courier carries) and which of
    /// its stops.
    struct Target: Equatable {
        let tripId: String
        let stop: RouteStop
    }

    /// Guides the trip on screen from the phone's new position: the first position (and the first after the next
    /// stop changes) fetches the route to that stop; later ones move along it, and leaving it fetches a new one
    /// (`Guidance`'s rule and throttle). A failed fetch waits `rules.rerouteInterval`, doubled per failure. A courier
    /// carrying several orders is guided to the first planned stop, whichever order it is for.
    public func locationChanged(_ fix: LocationFix) async {
        guard let source = guidanceSource else { return }
        guard let target = Self.target(state) else { clearGuidance(); return }
        let now = source.dates.now()
        let heading = fix.speed >= 1 ? fix.heading : nil
        if var current = guide, Self.target(of: current.route) == target {
            let action = current.update(position: fix.coordinate, heading: heading, accuracy: fix.accuracy, at: now)
            guide = current
            state.guidance = current.progress
            if case .reroute(let from, let heading) = action {
                await fetchRoute(target.tripId, from: from, heading: heading, source: source)
            }
            return
        }
        guard !fetching, fix.accuracy <= source.rules.worstAccuracy else { return }
        // A new stop is asked for at once; the same stop again (after a failure, or when the server answered for
        // another stop because a step is still on its way) only after the pause.
        if let last = lastFetch, lastFetchTarget == target || fetchFailures > 0 {
            let pause = min(
                source.rules.maximumRerouteInterval,
                source.rules.rerouteInterval * pow(2, Double(max(0, fetchFailures - 1))))
            guard now.timeIntervalSince(last) >= pause else { return }
        }
        lastFetch = now
        lastFetchTarget = target
        await fetchRoute(target.tripId, from: fix.coordinate, heading: heading, source: source)
    }

    /// The stop to guide to: the planned stop shown first, else the trip's own next stop; nil once the trip is over.
    static func target(_ state: ProviderTripViewState) -> Target? {
        if let stop = state.nextStop { return Target(tripId: stop.tripId, stop: stop.stop) }
        guard let trip = state.trip, let stop = nextStop(trip) else { return nil }
        return Target(tripId: trip.id, stop: stop)
    }

    static func target(of route: ProviderRoute) -> Target { Target(tripId: route.tripId, stop: route.stop) }

    /// The courier's planned `stops` still to make, going by the local trips (a step reported on the phone makes a
    /// stop before the server replans); a trip the phone does not hold keeps the server's word. Nil when fewer than
    /// two orders are left on it: an order carried alone is guided by its own status.
    static func stopsLeft(_ stops: [PlannedStop], trips: [String: LocalTrip]) -> [PlannedStop]? {
        let left = stops.filter { stop in
            guard let trip = trips[stop.tripId] else { return true }
            guard let next = nextStop(trip) else { return false }
            return stop.stop == .dropoff || next == .pickup
        }
        return Set(left.map(\.tripId)).count >= 2 ? left : nil
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
            guard Self.target(state)?.tripId == tripID else { return }
            fetchFailures = 0
            if var current = guide, Self.target(of: current.route) == Self.target(of: route) {
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
        } else if state.trip?.server.stops != nil {
            // Another order on the courier's route moved on: the next planned stop may have changed.
            show(state.trip, notice: state.notice)
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
        state.nextStop = trip.flatMap { trip in
            trip.server.stops.flatMap { stops in
                // Every order the phone holds, with the trip on screen as it is now.
                var trips = Dictionary(
                    ((try? engine.outbox.trips()) ?? []).map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
                trips[trip.id] = trip
                return Self.stopsLeft(stops, trips: trips)?.first
            }
        }
        // Guidance is for one trip's one stop: a step that changes the stop drops it until the next position.
        var next = state
        next.trip = trip
        if let guide, Self.target(next) != Self.target(of: guide.route) {
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
