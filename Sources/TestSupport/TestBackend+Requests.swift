public import Foundation
public import EnRouteModels
public import EnRouteDomain

extension TestBackend {
    public static let pickup = #"{"lat":60.1699,"lng":24.9384}"#
    public static let dropoff = #"{"lat":60.1841,"lng":24.9497}"#
    public static var rideBody: String { #"{"pickup":\#(pickup),"dropoff":\#(dropoff),"productID":"economy"}"# }
    public static var orderBody: String {
        #"{"merchantId":"m1","items":[{"sku":"coffee","quantity":2}],"destination":\#(dropoff)}"#
    }

    /// A ride request body for `customer` with a fresh quote (and a saved card).
    public func rideBody(_ customer: String = "c1") async throws -> String {
        try await rideBody(customer, pickup: Self.pickup, dropoff: Self.dropoff)
    }

    /// An order body for `customer` with a fresh basket quote (and a saved card).
    public func orderBody(_ customer: String = "c1") async throws -> String {
        try await orderBody(customer, items: #"[{"sku":"coffee","quantity":2}]"#, destination: Self.dropoff)
    }

    /// Creates a ride for `customer` and returns it.
    public func requestRide(_ customer: String = "c1", key: String = UUID().uuidString) async throws -> Trip {
        let r = await call(
            "POST", "/v1/trips", token: token(customer, .customer), json: try await rideBody(customer),
            headers: ["Idempotency-Key": key])
        guard r.status == 201 else {
            throw Failure("request ride: \(r.status) \(String(decoding: r.body, as: UTF8.self))")
        }
        return try WireCoding.decoder().decode(Trip.self, from: Data(r.body))
    }

    /// Places an order for `customer` and returns its tracking snapshot.
    public func placeOrder(_ customer: String = "c1", key: String = UUID().uuidString) async throws -> TrackingDTO {
        let r = await call(
            "POST", "/v1/orders", token: token(customer, .customer), json: try await orderBody(customer),
            headers: ["Idempotency-Key": key])
        guard r.status == 201 else {
            throw Failure("place order: \(r.status) \(String(decoding: r.body, as: UTF8.self))")
        }
        return try WireCoding.decoder().decode(TrackingDTO.self, from: Data(r.body))
    }

    /// A provider step with a fresh change id.
    public func step(
        _ trip: String, _ step: String, provider: String = "p1", changeId: String = UUID().uuidString,
        deviceTime: String = "2026-10-20T18:40:00Z"
    ) async -> (status: Int, body: [UInt8]) {
        let r = await call(
            "POST", "/v1/provider/trips/\(trip)/steps", token: token(provider, .provider),
            json:
                #"{"changeId":"\#(changeId)","step":"\#(step)","deviceTime":"\#(deviceTime)","#
                + #""position":\#(Self.pickup)}"#
        )
        return (r.status, r.body)
    }
}

public struct Failure: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

public func json(_ bytes: [UInt8]) -> [String: Any] {
    (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any] ?? [:]
}

extension TestBackend {
    /// `PUT /v1/account/phone` for `account`; the status.
    public func setPhone(_ account: String, _ role: Party, _ number: String) async -> Int {
        await call("PUT", APIPath.accountPhone, token: token(account, role), json: #"{"phoneNumber":"\#(number)"}"#)
            .status
    }

    /// `POST /v1/trips/{id}/call` for `account`, decoded.
    public func dial(_ tripId: String, _ account: String, _ role: Party) async throws -> TripCall {
        let r = await call("POST", APIPath.tripCall(tripId), token: token(account, role))
        guard r.status == 200 else { throw Failure("call: \(r.status) \(String(decoding: r.body, as: UTF8.self))") }
        return try WireCoding.decoder().decode(TripCall.self, from: Data(r.body))
    }
}
