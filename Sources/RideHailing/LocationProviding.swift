public import EnRouteModels

/// Supplies the rider's position for the pickup.
public protocol LocationProviding: Sendable {
    /// The first fix at least as accurate as `accuracy` metres.
    func currentLocation(accuracy: Double) async throws -> Coordinate
}
