/// How a ride's update stream ended on its own.
public enum RideOutcome: Sendable, Equatable {
    /// The driver reached the pickup.
    case driverArrived
    /// The ride ended without a pickup: cancelled by the driver or the server, or no driver found.
    case cancelled
}
