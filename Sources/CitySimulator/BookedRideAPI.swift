import Foundation
import HTTPTransport
import EnRouteModels
import RideHailing

/// The rider's trip calls for a ride booked ahead: the estimates and the request both carry `scheduledFor` (the kit's
/// `TripAPI` prices and requests rides for now only); everything else is the kit's own `RemoteTripAPI`.
struct BookedRideAPI: TripAPI {
    let base: RemoteTripAPI
    let client: any HTTPClient
    let server: APIServer
    /// When the driver should be at the pickup.
    let scheduledFor: Date

    /// `POST /v1/estimates` for the booked time, so the quotes name it.
    func estimate(pickup: Coordinate, dropoff: Coordinate) async throws -> [Estimate] {
        let body = EstimateRequest(pickup: pickup, dropoff: dropoff, scheduledFor: scheduledFor)
        let request = try await server.request("POST", APIPath.estimates, json: body)
        return try await client.send(request).decode([Estimate].self)
    }

    /// The kit's request with the booked time added (the quote it names was asked for the same time).
    func requestTrip(_ request: TripRequest, idempotencyKey: UUID) async throws -> Trip {
        let booked = TripRequest(
            pickup: request.pickup, dropoff: request.dropoff, productID: request.productID, quoteId: request.quoteId,
            scheduledFor: scheduledFor)
        return try await base.requestTrip(booked, idempotencyKey: idempotencyKey)
    }

    func activeTrip() async throws -> Trip? { try await base.activeTrip() }
    func cancel(tripID: String) async throws -> Trip { try await base.cancel(tripID: tripID) }
    func nearbyDrivers(around point: Coordinate) async throws -> [Coordinate] {
        try await base.nearbyDrivers(around: point)
    }
    func route(tripID: String) async throws -> [Coordinate] { try await base.route(tripID: tripID) }
}
