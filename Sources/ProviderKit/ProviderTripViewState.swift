/// What the provider's trip screen shows.
public struct ProviderTripViewState: Sendable, Equatable {
    /// The trip on screen: the newest unfinished local trip, else the last one that finished.
    public var trip: LocalTrip?
    /// The button to show next, from the displayed status.
    public var nextStep: ProviderStep?
    /// An explanation after a rollback, or a local error.
    public var notice: String?
    /// Turn-by-turn guidance to the trip's next stop, once a route is known (needs a `GuidanceSource`).
    public var guidance: Guidance.Progress?
    /// True while steps wait to reach the server (the "sending…" badge).
    public var isSyncing: Bool { (trip?.pendingSteps ?? 0) > 0 }

    /// An empty screen.
    public init(trip: LocalTrip? = nil, nextStep: ProviderStep? = nil, notice: String? = nil) {
        self.trip = trip; self.nextStep = nextStep; self.notice = notice
    }
}
