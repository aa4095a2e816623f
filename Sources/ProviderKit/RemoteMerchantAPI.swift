public import HTTPTransport
public import EnRouteModels
import Foundation

/// The merchant endpoints of the EnRoute API over an `HTTPClient`.
public struct RemoteMerchantAPI: MerchantOrdersAPI {
    private let client: any HTTPClient
    private let server: APIServer

    /// Calls `server` through `client`.
    public init(client: any HTTPClient, server: APIServer) {
        self.client = client
        self.server = server
    }

    /// `GET /v1/merchant/orders`, every page: follows `nextCursor` until the last page.
    public func orders() async throws -> [TripSnapshot] {
        var orders: [TripSnapshot] = []
        var cursor: String?
        var seen: Set<String> = []
        repeat {
            let page = try await client.send(await server.request("GET", APIPath.merchantOrders(cursor: cursor)))
                .decode(TripSnapshotList.self)
            orders += page.trips
            cursor = page.nextCursor
            // A server that hands back a cursor it already gave would loop forever; its list ends there.
            if let next = cursor, !seen.insert(next).inserted { cursor = nil }
        } while cursor != nil
        return orders
    }

    /// `POST /v1/merchant/orders/{id}/accept` with the tap's `Idempotency-Key`.
    public func accept(orderId: String, preparationMinutes: Int, idempotencyKey: String) async throws -> TripSnapshot {
        let request = try await server.request(
            "POST", APIPath.merchantOrderAccept(orderId),
            json: MerchantAcceptRequest(preparationMinutes: preparationMinutes),
            headers: ["Idempotency-Key": idempotencyKey])
        return try Self.trip(from: try await client.send(request))
    }

    /// `POST /v1/merchant/orders/{id}/ready` with the tap's `Idempotency-Key`.
    public func markReady(orderId: String, idempotencyKey: String) async throws -> TripSnapshot {
        let request = await server.request(
            "POST", APIPath.merchantOrderReady(orderId),
            headers: ["Idempotency-Key": idempotencyKey])
        return try Self.trip(from: try await client.send(request))
    }

    static func trip(from response: HTTPClientResponse) throws -> TripSnapshot {
        if response.status == 409,
            let conflict = try? WireCoding.decoder().decode(ConflictProblem<TripSnapshot>.self, from: response.body)
        {
            throw TripConflict(trip: conflict.trip, reason: conflict.detail)
        }
        return try response.decode(TripSnapshot.self)
    }
}
