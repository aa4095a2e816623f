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

    /// The empty screen: no estimates, no trip.
    public init() {}

    /// Seconds to the next stop: the live ETA for the current trip, else the trip's own.
    public var etaSeconds: Int? {
        guard let trip else { return nil }
        return liveETA.tripID == trip.id ? liveETA.seconds : trip.etaSeconds
    }

    /// True when the rider may request a ride now.
    public var canRequest: Bool { !isRequesting && trip?.state.isActive != true }

    /// True when the rider may cancel now: before the trip starts, and not twice at once.
    public var canCancel: Bool {
        guard !isCancelling, let state = trip?.state else { return false }
        return state == .searching || state == .driverAssigned || state == .driverArrived
    }
}
