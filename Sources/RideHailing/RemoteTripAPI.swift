public import Foundation
public import HTTPTransport
public import EnRouteModels

/// `TripAPI` over the EnRoute HTTP API; non-2xx answers throw `APIError`, the quote and payment refusals of a
/// request `RideRequestRefusal`.
public struct RemoteTripAPI: TripAPI {
    let client: any HTTPClient
    let server: APIServer

    /// An API that sends through `client` to `server`, with its credentials.
    public init(client: any HTTPClient, server: APIServer) {
        self.client = client
        self.server = server
    }

    /// `POST /v1/estimates`.
    public func estimate(pickup: Coordinate, dropoff: Coordinate) async throws -> [Estimate] {
        let request = try await server.request(
            "POST", APIPath.estimates, json: EstimateRequest(pickup: pickup, dropoff: dropoff))
        return try await client.send(request).decode([Estimate].self)
    }

    /// `POST /v1/trips` with an `Idempotency-Key` header; a 402, a 409 `quote-expired` or a 422 on `/quoteId` throws
    /// `RideRequestRefusal`.
    public func requestTrip(_ request: TripRequest, idempotencyKey: UUID) async throws -> Trip {
        let http = try await server.request(
            "POST", APIPath.trips, json: request,
            headers: ["Idempotency-Key": idempotencyKey.uuidString])
        let response = try await client.send(http)
        if let refusal = RideRequestRefusal(response) { throw refusal }
        return try response.decode(Trip.self)
    }

    /// `GET /v1/trips/active`; 204 means no active trip.
    public func activeTrip() async throws -> Trip? {
        let response = try await client.send(await server.request("GET", APIPath.activeTrip))
        if response.status == 204 { return nil }
        return try response.decode(Trip.self)
    }

    /// `GET /v1/trips/{id}`.
    public func trip(id: String) async throws -> Trip {
        try await client.send(await server.request("GET", APIPath.trip(id))).decode(Trip.self)
    }

    /// `POST /v1/trips/{id}/cancel` without a reason.
    public func cancel(tripID: String) async throws -> Trip {
        try await cancel(tripID: tripID, reason: nil)
    }

    /// `POST /v1/trips/{id}/cancel`, with a `CancelRequest` body when there is a reason; 409 once it is too late.
    public func cancel(tripID: String, reason: String?) async throws -> Trip {
        let path = APIPath.tripCancel(tripID)
        let request =
            if let reason {
                try await server.request("POST", path, json: CancelRequest(reason: reason))
            } else {
                await server.request("POST", path)
            }
        return try await client.send(request).decode(Trip.self)
    }

    /// `GET /v1/trips/{id}/route`: a JSON array of `{lat, lng}`; 503 when the server has no road network.
    public func route(tripID: String) async throws -> [Coordinate] {
        try await client.send(await server.request("GET", APIPath.tripRoute(tripID))).decode([Coordinate].self)
    }

    /// `GET /v1/drivers/nearby?lat=..&lng=..`.
    public func nearbyDrivers(around point: Coordinate) async throws -> [Coordinate] {
        let request = await server.request("GET", APIPath.nearbyDrivers(lat: point.lat, lng: point.lng))
        return try await client.send(request).decode([Coordinate].self)
    }
}
