public import Foundation
public import EnRouteModels

/// The rider's REST calls.
public protocol TripAPI: Sendable {
    /// Prices and pickup times per product for a route.
    func estimate(pickup: Coordinate, dropoff: Coordinate) async throws -> [Estimate]
    /// Requests a ride; retries with the same `idempotencyKey` create at most one trip.
    func requestTrip(_ request: TripRequest, idempotencyKey: UUID) async throws -> Trip
    /// The rider's active trip, or nil when there is none.
    func activeTrip() async throws -> Trip?
    /// Cancels a trip and returns it as the server now sees it.
    func cancel(tripID: String) async throws -> Trip
    /// Free cars near a point, shown on the map before a trip.
    func nearbyDrivers(around point: Coordinate) async throws -> [Coordinate]
    /// The ride's remaining road route as the map draws it (`GET /v1/trips/{id}/route`): the driver, the pickup
    /// when not yet picked up, the drop-off.
    func route(tripID: String) async throws -> [Coordinate]
}
