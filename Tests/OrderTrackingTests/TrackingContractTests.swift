import Foundation
import Testing
import ClientKit
import EnRouteModels
import EnRouteDomain
import EnRouteAPI
import TestSupport
@testable import OrderTracking

/// The tracking repository and store against the real trip service in-process, across a whole delivery.
@MainActor @Suite struct TrackingContractTests {
    func loaded(_ store: OrderTrackingStore, _ id: OrderID) -> OrderTracking? {
        if case .loaded(let tracking) = store.state(of: id) { return tracking }
        return nil
    }

    @Test func repositoryAndStoreFollowAWholeDelivery() async throws {
        let backend = TestBackend()
        let (http, server) = backend.client("c1", .customer)
        let repository = RemoteOrderTrackingRepository(http: http, server: server, clock: backend.clock)
        let store = OrderTrackingStore(tracking: repository)
        let following = Task { await store.start() }
        defer { following.cancel() }

        let body = try await backend.orderBody(
            "c1", items: #"[{"sku":"tea","quantity":1}]"#, destination: #"{"lat":60.1841,"lng":24.9497}"#)
        let placed = await backend.call(
            "POST", "/v1/orders", token: backend.token("c1", .customer), json: body,
            headers: ["Idempotency-Key": UUID().uuidString])
        #expect(placed.status == 201)
        let orderID = try WireCoding.decoder().decode(TrackingDTO.self, from: Data(placed.body)).orderId
        let id = OrderID(orderID)
        _ = try await repository.refreshActive()
        try await eventually("placed") { loaded(store, id)?.status == .placed }

        let merchant = backend.token("m1", .merchant), provider = backend.token("p1", .provider)
        _ = await backend.call(
            "POST", "/v1/merchant/orders/\(orderID)/accept", token: merchant, json: #"{"preparationMinutes":5}"#)
        _ = try await repository.refresh(id)
        try await eventually("picking") { loaded(store, id)?.status == .picking }
        #expect(loaded(store, id)?.eta != nil)

        _ = await backend.assign(orderID, to: "p1")
        _ = await backend.call("POST", "/v1/merchant/orders/\(orderID)/ready", token: merchant)
        _ = await backend.call(
            "POST", "/v1/provider/trips/\(orderID)/steps", token: provider,
            json: #"{"changeId":"s1","step":"onTheWay","deviceTime":"2026-10-20T18:40:00Z"}"#)
        let recorded = backend.clock.date
        _ = await backend.call(
            "POST", "/v1/provider/locations", token: provider,
            json:
                #"{"batchId":"b1","fixes":[{"lat":60.176,"lng":24.941,"heading":10,"speed":6,"accuracy":5,"#
                + #""recordedAt":"\#(ISO8601.format(recorded))"}]}"#
        )
        _ = try await repository.refresh(id)
        try await eventually("on the way with the rider") {
            loaded(store, id)?.status == .onTheWay && loaded(store, id)?.rider != nil
        }
        let onTheWay = try #require(loaded(store, id))
        #expect(onTheWay.rider?.coordinate == Coordinate(lat: 60.176, lng: 24.941))
        #expect(onTheWay.rider?.recordedAt == recorded)
        #expect(onTheWay.version == 5)

        // A reply that left the server earlier (version 5) and lands late never moves the store back.
        _ = await backend.call(
            "POST", "/v1/provider/trips/\(orderID)/steps", token: provider,
            json: #"{"changeId":"s2","step":"delivered","deviceTime":"2026-10-20T18:50:00Z"}"#)
        _ = try await repository.refresh(id)
        try await eventually("delivered") { loaded(store, id)?.status == .delivered }
        let delivered = try #require(loaded(store, id))
        #expect(delivered.version == 6)
        #expect(try await repository.refreshActive().isEmpty)
        #expect(loaded(store, id)?.status == .delivered, "a finished order is not forgotten or reopened")
    }
}
