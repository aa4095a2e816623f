/// Why a `LiveRideService` call could not answer.
public enum RideTrackingError: Error, Sendable, Equatable {
    /// The update carried no ETA from the server.
    case noETA
    /// The ride is not the rider's active trip.
    case rideNotActive
}
