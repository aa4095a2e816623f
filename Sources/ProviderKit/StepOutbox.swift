public import ClientKit
public import EnRouteModels

/// The platform's outbox of state changes: `reportStep` records the change and moves the provider's screen on at once,
/// in one local transaction; the `StepSyncEngine` sends it later.
public final class StepOutbox: Sendable {
    let store: ProviderStore
    private let positions: PointBuffer
    private let dates: any DateProvider
    private let makeID: @Sendable () -> String

    /// An outbox in `store`; changes carry `positions`' last kept fix, `dates`' time and an id from `makeID`.
    public init(
        store: ProviderStore, positions: PointBuffer, dates: any DateProvider, makeID: @escaping @Sendable () -> String
    ) {
        self.store = store
        self.positions = positions
        self.dates = dates
        self.makeID = makeID
    }

    /// `reportStep`: writes the change (new id, device time, last kept position) and the trip's displayed status in one
    /// transaction, and returns the trip as the screen should now show it. Never touches the network. A `delivered`
    /// step may name its proof (`ProofCaptureQueue.capture`'s id): the step goes at once, the proof follows.
    @discardableResult
    public func reportStep(
        _ step: ProviderStep, on trip: TripSnapshot, proofId: String? = nil
    ) throws -> (change: StepChange, trip: LocalTrip) {
        let change = StepChange(
            changeId: makeID(), tripId: trip.id, step: step, deviceTime: dates.now(),
            position: positions.lastKeptFix?.coordinate, proofId: proofId)
        let local = try store.enqueue(change, trip: trip)
        return (change, local)
    }

    /// Every change not yet answered, oldest first.
    public func pending() throws -> [StepChange] { try store.pendingChanges() }

    /// The local copy of a trip.
    public func trip(_ id: String) throws -> LocalTrip? { try store.localTrip(id) }

    /// Every local trip, unfinished first.
    public func trips() throws -> [LocalTrip] { try store.localTrips() }

    /// Keeps a trip the server sent outside the outbox (an event, the active list); an older version is ignored.
    @discardableResult
    public func receive(_ trip: TripSnapshot) throws -> LocalTrip { try store.saveServerTrip(trip) }

    /// Forgets finished trips with nothing left to send.
    public func forgetFinishedTrips() throws { try store.forgetFinishedTrips() }
}
