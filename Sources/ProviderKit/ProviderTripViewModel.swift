public import EnRouteModels
public import Observation

/// The provider's trip screen over the outbox: a tap moves the screen on at once; answers arrive later from the
/// sync engine, and a refusal rolls the screen back to the real state with an explanation (seed 004).
@MainActor @Observable
public final class ProviderTripViewModel {
    /// What the screen shows.
    public private(set) var state = ProviderTripViewState()

    @ObservationIgnored private let engine: StepSyncEngine
    @ObservationIgnored private var listening: Task<Void, Never>?

    static let storeFailedMessage = "The step couldn't be saved on this phone. Try again."

    /// A screen over `engine` and its outbox.
    public init(engine: StepSyncEngine) {
        self.engine = engine
    }

    /// Shows the local trips as the store has them (after a launch, they include unsent steps).
    public func load() {
        show((try? engine.outbox.trips())?.first, notice: state.notice)
    }

    /// Reports the next step (or `step`) on the trip on screen; the screen moves on before anything is sent.
    public func reportStep(_ step: ProviderStep? = nil) {
        guard let trip = state.trip, let step = step ?? state.nextStep else { return }
        do {
            let (_, local) = try engine.reportStep(step, on: trip.server)
            show(local, notice: nil)
        } catch {
            state.notice = Self.storeFailedMessage
        }
    }

    /// Takes a trip the server sent (an accepted offer, a `tripUpdated` event, the active list).
    public func receive(_ trip: TripSnapshot) {
        guard let local = try? engine.outbox.receive(trip) else { return }
        if state.trip == nil || state.trip?.id == trip.id || ProviderStep.isFinished(state.trip?.displayedStatus ?? "") {
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
        state.trip = trip
        state.nextStep = trip.flatMap { ProviderStep.next(afterStatus: $0.displayedStatus, kind: $0.server.kind, merchantStep: $0.server.merchantStep) }
        state.notice = notice
    }
}
