public import Foundation

/// The tracking screen's service.
public protocol RideTracking: Sendable {
    /// The driver's positions until they reach the pickup; stops when the consumer goes away.
    func driverUpdates(rideID: String) -> AsyncStream<DriverUpdate>
    /// The time to pickup as of `update`.
    func eta(for update: DriverUpdate) async throws -> Duration
    /// The route as a JSON array of coordinates (see `RouteDecoder`).
    func routeData(rideID: String) async throws -> Data
    /// Asks the server to cancel; returns once it agreed.
    func cancelRide(rideID: String) async throws
    /// Why `driverUpdates` ended by itself; the seed's answer, `.driverArrived`, unless the service knows better.
    func outcome(rideID: String) async -> RideOutcome
}

extension RideTracking {
    /// A finished update stream means the driver arrived.
    public func outcome(rideID: String) async -> RideOutcome { .driverArrived }
}
