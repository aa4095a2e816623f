public import EnRouteModels

/// What the provider's trip screen shows.
public struct ProviderTripViewState: Sendable, Equatable {
    /// The trip on screen: the newest unfinished local trip, else the last one that finished.
    public var trip: LocalTrip?
    /// The button to show next, from the displayed status.
    public var nextStep: ProviderStep?
    /// An explanation after a rollback, or a local error.
    public var notice: String?
    /// Turn-by-turn guidance to the next stop, once a route is known (needs a `GuidanceSource`).
    public var guidance: Guidance.Progress?
    /// A courier carrying several orders: the first of its planned stops still to make (perhaps another order's);
    /// nil for a trip carried alone.
    public var nextStop: PlannedStop?
    /// "Collect order 8F3K" or "Hand over order 8F3K": `nextStop` in words.
    public var nextStopText: String? { nextStop.map(Self.text) }
    /// True while steps wait to reach the server (the "sending…" badge).
    public var isSyncing: Bool { (trip?.pendingSteps ?? 0) > 0 }

    /// "Collect order 8F3K" at a merchant, "Hand over order 8F3K" at a customer.
    public static func text(_ stop: PlannedStop) -> String {
        "\(stop.stop == .pickup ? "Collect" : "Hand over") order \(shortID(stop.tripId))"
    }

    /// The first four letters or digits of an id, in capitals: enough to tell two orders apart on one route.
    public static func shortID(_ id: String) -> String {
        String(id.filter { $0.isLetter || $0.isNumber }.prefix(4)).uppercased()
    }

    /// An empty screen.
    public init(trip: LocalTrip? = nil, nextStep: ProviderStep? = nil, notice: String? = nil) {
        self.trip = trip; self.nextStep = nextStep; self.notice = notice
    }
}
