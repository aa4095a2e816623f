public import EnRouteModels

/// Everything the rider's map screen shows, as one value.
public struct TripViewState: Equatable, Sendable {
    /// Prices per product for the chosen route.
    public var estimates: [Estimate] = []
    /// Free cars near the pickup, before a trip.
    public var nearbyDrivers: [Coordinate] = []
    /// The current trip, newest version first seen.
    public var trip: Trip?
    /// The latest accepted driver position; draw the marker from `TripViewModel.markerFrame()`.
    public var driverLocation: DriverLocation?
    /// The newest ETA from the trip's versions and the driver's fixes, guarded against late answers.
    public var liveETA = LiveETA()
    /// A request is in flight, retries included.
    public var isRequesting = false
    /// A cancel is in flight.
    public var isCancelling = false
    /// A message for the rider, or nil.
    public var errorMessage: String?
    /// Seconds until the quotes on screen run out, counting down; nil when they carry no expiry or no date source is
    /// given.
    public var quoteSecondsLeft: Int?
    /// Products re-quoted since the rider chose the route: the price seen before and the one on screen now.
    public var refreshedQuotes: [QuoteRefresh] = []
    /// The quotes ran out and could not be refreshed yet (offline): confirming now would be refused.
    public var quotesExpired = false
    /// What the rider must do after the server refused a confirmation (new price, declined card, challenge, debt, no
    /// card).
    public var prompt: RideRequestPrompt?
    /// The saved cards, to offer another after a decline.
    public var paymentMethods: [PaymentMethodSummary] = []
    /// A payment action (adding or switching a card, settling the balance) is in flight.
    public var isPaying = false

    /// The empty screen: no estimates, no trip.
    public init() {}

    /// Seconds to the next stop: the live ETA for the current trip, else the trip's own.
    public var etaSeconds: Int? {
        guard let trip else { return nil }
        return liveETA.tripID == trip.id ? liveETA.seconds : trip.etaSeconds
    }

    /// True when the rider may request a ride now.
    public var canRequest: Bool { !isRequesting && !isPaying && trip?.state.isActive != true }

    /// The refresh of `productID`'s quote since the route was chosen, if it was re-quoted.
    public func refresh(of productID: String) -> QuoteRefresh? { refreshedQuotes.first { $0.productID == productID } }

    /// True when the rider may cancel now: before the trip starts, and not twice at once.
    public var canCancel: Bool {
        guard !isCancelling, let state = trip?.state else { return false }
        return state == .searching || state == .driverAssigned || state == .driverArrived
    }
}
