import Foundation
import Testing
import EnRouteModels
import EnRouteDomain
import EnRouteAPI
import TestSupport

/// A delivery's arrival time includes the merchant's remaining preparation time.
@Suite(.timeLimit(.minutes(1))) struct MerchantETATests {
    @Test func aDeliveryETAIncludesTheRemainingPreparationTime() async throws {
        let backend = TestBackend()
        let order = try await backend.placeOrder()
        let placedAt = backend.clock.date
        let accept = await backend.call(
            "POST", "/v1/merchant/orders/\(order.orderId)/accept", token: backend.token("m1", .merchant),
            json: #"{"preparationMinutes":25}"#)
        #expect(accept.status == 200)
        let preparing = try #require(try backend.service.cached(order.orderId))
        let readyAt = try #require(preparing.readyAt)
        #expect(readyAt == placedAt.addingTimeInterval(25 * 60))
        let earliest = try #require(preparing.etaEarliest)
        #expect(earliest > readyAt, "the goods leave only once they are ready")

        // Ten minutes later a courier close to the merchant sends a fix: the estimate still waits for the goods.
        await backend.clock.advance(by: .seconds(600))
        #expect(await backend.assign(order.orderId, to: "r1").status == 200)
        let fix =
            #"{"batchId":"b1","fixes":[{"lat":60.1690,"lng":24.9318,"heading":0,"speed":3,"accuracy":5,"#
            + #""recordedAt":"\#(ISO8601.format(backend.clock.date))"}]}"#
        #expect(
            await backend.call("POST", "/v1/provider/locations", token: backend.token("r1", .provider), json: fix)
                .status == 200)
        let moving = try #require(try backend.service.cached(order.orderId))
        #expect(try #require(moving.etaEarliest) > readyAt)
        #expect(moving.etaEarliest == earliest, "the remaining preparation, not the courier, decides")

        // Marked ready early: the estimate comes forward.
        #expect(
            await backend.call(
                "POST", "/v1/merchant/orders/\(order.orderId)/ready", token: backend.token("m1", .merchant)
            ).status == 200)
        let ready = try #require(try backend.service.cached(order.orderId))
        #expect(try #require(ready.etaEarliest) < earliest)
    }
}
