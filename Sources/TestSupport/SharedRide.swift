public import Foundation
public import EnRouteModels

/// A ride with a provider driving, through the real router: the share page's subject.
public struct SharedRide {
    public let backend: TestBackend
    public let tripId: String
    public let token: String

    /// A ride for `customer`, assigned to p1, with one fix at `at` and a share link.
    public static func make(
        _ backend: TestBackend, customer: String = "c1", fixAt at: Coordinate = Coordinate(lat: 60.1705, lng: 24.9400)
    ) async throws -> SharedRide {
        let body = try await backend.rideBody(customer, pickup: SharedRide.pickup, dropoff: SharedRide.dropoff)
        let created = await backend.call(
            "POST", APIPath.trips, token: backend.token(customer, .customer), json: body,
            headers: ["Idempotency-Key": UUID().uuidString])
        guard created.status == 201 else {
            throw Failure("ride not created: \(created.status) \(String(decoding: created.body, as: UTF8.self))")
        }
        let trip = try WireCoding.decoder().decode(Trip.self, from: Data(created.body))
        guard await backend.assign(trip.id, to: "p1").status == 200 else { throw Failure("assign failed") }
        _ = await backend.call(
            "POST", APIPath.providerAvailability, token: backend.token("p1", .provider), json: #"{"online":true}"#)
        try await fix(backend, at)
        let shared = await backend.call(
            "POST", APIPath.tripShare(trip.id), token: backend.token(customer, .customer),
            headers: ["Host": "enroute.test"])
        guard shared.status == 201 else { throw Failure("share failed: \(shared.status)") }
        let link = try JSONDecoder().decode(Link.self, from: Data(shared.body))
        return SharedRide(backend: backend, tripId: trip.id, token: link.token)
    }

    /// The provider reports a fix at `at`, taken now on the backend's clock.
    public static func fix(_ backend: TestBackend, _ at: Coordinate, batch: String = UUID().uuidString) async throws {
        let fix =
            #"{"batchId":"\#(batch)","fixes":[{"lat":\#(at.lat),"lng":\#(at.lng),"heading":45,"speed":7,"accuracy":5,"#
            + #""recordedAt":"\#(ISO8601.format(backend.clock.date))"}]}"#
        let posted = await backend.call(
            "POST", APIPath.providerLocations, token: backend.token("p1", .provider), json: fix)
        guard posted.status / 100 == 2 else {
            throw Failure("fix refused: \(posted.status) \(String(decoding: posted.body, as: UTF8.self))")
        }
    }

    public static let pickup = #"{"lat":60.1699,"lng":24.9384}"#
    public static let dropoff = #"{"lat":60.1720,"lng":24.9460}"#

    /// A share link as the API answers it.
    public struct Link: Decodable { public let url: String; public let token: String; public let expiresAt: String }
}
