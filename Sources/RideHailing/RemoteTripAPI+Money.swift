public import Foundation
public import EnRouteModels
import HTTPTransport

extension RemoteTripAPI: RidePaymentsAPI {
    /// `GET /v1/payment-methods`.
    public func paymentMethods() async throws -> [PaymentMethodSummary] {
        try await client.send(await server.request("GET", APIPath.paymentMethods)).decode(PaymentMethodList.self)
            .methods
    }

    /// `POST /v1/payment-methods {token, makeDefault}`.
    public func addPaymentMethod(token: String, makeDefault: Bool) async throws -> PaymentMethodSummary {
        let request = try await server.request(
            "POST", APIPath.paymentMethods,
            json: PaymentMethodRequest(token: token, makeDefault: makeDefault))
        return try await client.send(request).decode(PaymentMethodSummary.self)
    }

    /// `POST /v1/payment-methods/{id}/default`.
    public func makeDefaultPaymentMethod(id: String) async throws {
        try await client.send(await server.request("POST", APIPath.paymentMethodDefault(id))).requireSuccess()
    }

    /// `DELETE /v1/payment-methods/{id}`.
    public func removePaymentMethod(id: String) async throws {
        try await client.send(await server.request("DELETE", APIPath.paymentMethod(id))).requireSuccess()
    }

    /// `POST /v1/account/balance/settle` with an `Idempotency-Key`; a 402 throws `RideRequestRefusal.payment`.
    public func settleBalance(idempotencyKey: UUID) async throws -> AccountBalance {
        let request = await server.request(
            "POST", APIPath.accountBalanceSettle, headers: ["Idempotency-Key": idempotencyKey.uuidString])
        let response = try await client.send(request)
        if response.status == 402, let problem = RideRequestRefusal.paymentProblem(response.body) {
            throw RideRequestRefusal.payment(problem)
        }
        return try response.decode(AccountBalance.self)
    }
}

extension RemoteTripAPI: TripReceiptAPI {
    /// `GET /v1/trips/{id}/receipt`; 404 until the payment settles.
    public func receipt(tripID: String) async throws -> Receipt {
        try await client.send(await server.request("GET", APIPath.tripReceipt(tripID))).decode(Receipt.self)
    }

    /// `POST /v1/trips/{id}/tip {amountMinor}` with an `Idempotency-Key`.
    public func tip(tripID: String, amountMinor: Int, idempotencyKey: UUID) async throws {
        let request = try await server.request(
            "POST", APIPath.tripTip(tripID), json: TipRequest(amountMinor: amountMinor),
            headers: ["Idempotency-Key": idempotencyKey.uuidString])
        try await client.send(request).requireSuccess()
    }

    /// `POST /v1/trips/{id}/rating {stars, comment}`.
    public func rate(tripID: String, stars: Int, comment: String?) async throws {
        let request = try await server.request(
            "POST", APIPath.tripRating(tripID), json: RatingRequest(stars: stars, comment: comment))
        try await client.send(request).requireSuccess()
    }
}

extension RemoteTripAPI: TripHistoryAPI {
    /// `GET /v1/trips?cursor=&limit=`.
    public func history(cursor: String?, limit: Int) async throws -> TripSnapshotList {
        try await client.send(await server.request("GET", APIPath.tripHistory(cursor: cursor, limit: limit))).decode(
            TripSnapshotList.self)
    }
}
