public import EnRouteModels

/// What the rider's screens know of the live trip: its newest version, the driver's newest fix and the newest ETA.
public struct LiveTripState: Sendable, Equatable {
    /// The newest version of the trip; nil before any.
    public internal(set) var trip: Trip?
    /// The driver's newest fix for this trip (by `seq`); nil before one.
    public internal(set) var driverLocation: DriverLocation?
    /// The newest ETA from the trip's versions and the driver's fixes, guarded against late answers.
    public internal(set) var eta = LiveETA()

    /// No trip yet.
    public init() {}
}
