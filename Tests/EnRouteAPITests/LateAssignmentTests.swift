import Foundation
import Testing
import EnRouteModels
import EnRouteDomain
import EnRouteAPI
import TestSupport

/// Late assignment: the courier is offered the order so as to reach the merchant when it is ready, not long before.
@Suite(.timeLimit(.minutes(1))) struct LateAssignmentTests {
    /// 900 m north of Kamppi Kitchen (m1): 108 s in a straight line at 30 km/h.
    static let courier = Coordinate(lat: 60.16949 + 900 / 111_195, lng: 24.93752)

    func makeSUT() async throws -> ProviderBackend {
        var policy = DispatchPolicy()
        policy.deliveryAssignment = .late
        let sut = try ProviderBackend(policy: policy, fixLifetime: 7_200)
        await sut.online("r1", at: Self.courier)
        return sut
    }

    func merchant(_ sut: ProviderBackend, _ order: String, _ path: String, _ json: String? = nil) async -> Int {
        await sut.call("POST", "/v1/merchant/orders/\(order)/\(path)", as: "m1", .merchant, json: json).status
    }

    @Test func theCourierIsOfferedTheOrderToReachTheMerchantAsItIsReady() async throws {
        let sut = try await makeSUT()
        let order = try await sut.backend.placeOrder().orderId
        #expect(await merchant(sut, order, "accept", #"{"preparationMinutes":10}"#) == 200)
        // Ready at 600 s; the courier needs 108 s and should be there 120 s early: the offer goes at 372 s.
        for _ in 0..<6 {
            await sut.clock.sleepers(atLeast: 1)
            await sut.clock.advance(by: .seconds(60))
        }
        await sut.clock.sleepers(atLeast: 1)
        #expect(sut.providers.dispatcher.liveOffer(forTrip: order) == nil)
        await sut.clock.advance(by: .seconds(15))
        try await eventually("the offer at 372 s") { sut.providers.dispatcher.liveOffer(forTrip: order) != nil }
        #expect(sut.providers.dispatcher.liveOffer(heldBy: "r1")?.tripId == order)
    }

    @Test func anOrderMarkedReadyEarlyIsOfferedAtOnce() async throws {
        let sut = try await makeSUT()
        let order = try await sut.backend.placeOrder().orderId
        #expect(await merchant(sut, order, "accept", #"{"preparationMinutes":30}"#) == 200)
        await sut.clock.sleepers(atLeast: 1)
        await sut.clock.advance(by: .seconds(60))
        await sut.clock.sleepers(atLeast: 1)
        #expect(sut.providers.dispatcher.liveOffer(forTrip: order) == nil)
        #expect(await merchant(sut, order, "ready") == 200)
        try await eventually("the offer once ready") { sut.providers.dispatcher.liveOffer(forTrip: order) != nil }
    }

    @Test func withNobodyNearTheSearchBeginsAtOnceAndWaitsForSupply() async throws {
        var policy = DispatchPolicy()
        policy.deliveryAssignment = .late
        let sut = try ProviderBackend(policy: policy, fixLifetime: 7_200)
        let order = try await sut.backend.placeOrder().orderId
        await sut.clock.sleepers(atLeast: 1)
        // The courier appears long before the order is ready: the search was already looking, and offers at once.
        await sut.online("r1", at: Self.courier)
        try await eventually("the offer on supply") { sut.providers.dispatcher.liveOffer(forTrip: order) != nil }
    }
}
