import Foundation
import Testing
import HTTPTransport
import EnRouteModels
import ProviderKit
import TestSupport

/// The merchant's screen against the real server in-process.
@MainActor
@Suite struct MerchantOrdersViewModelTests {
    func makeSUT(
        _ backend: TestBackend,
        plan: sending @escaping (Int, HTTPClientRequest) -> FaultInjectingHTTPClient.Fault = { _, _ in .none }
    )
        -> (MerchantOrdersViewModel, FaultInjectingHTTPClient)
    {
        let (inner, server) = backend.client("m1", .merchant)
        let http = FaultInjectingHTTPClient(wrapping: inner, plan: plan)
        let viewModel = MerchantOrdersViewModel(
            api: RemoteMerchantAPI(client: http, server: server), clock: backend.clock,
            makeKey: SequentialIDs("merchant-tap").maker)
        return (viewModel, http)
    }

    /// The server answers 50 orders a page; the client follows `nextCursor` to the last one.
    @Test func listsEveryOrderAcrossThePagesOfTheMerchantList() async throws {
        let backend = TestBackend()
        var placed: [String] = []
        for i in 0..<61 {
            placed.append(try await backend.placedOrder(customer: "c\(i)"))
            await backend.clock.advance(by: .seconds(1))
        }
        let (viewModel, http) = makeSUT(backend)
        await viewModel.load()
        #expect(viewModel.state.orders.map(\.id) == placed)
        #expect(http.requests.filter { $0.request.url.path == "/v1/merchant/orders" }.count == 2)
    }

    @Test func listsAcceptsWithAPreparationTimeAndMarksReady() async throws {
        let backend = TestBackend()
        let orderId = try await backend.placedOrder()
        let (viewModel, _) = makeSUT(backend)

        await viewModel.load()
        #expect(viewModel.state.orders.map(\.id) == [orderId])
        #expect(viewModel.state.orders.first.map(MerchantOrdersViewState.action(for:)) == .accept)

        await viewModel.accept(orderId, preparationMinutes: 12)
        let accepted = try #require(viewModel.state.orders.first)
        #expect(accepted.merchantStep == "preparing")
        #expect(accepted.readyAt == backend.clock.date.addingTimeInterval(12 * 60))
        #expect(MerchantOrdersViewState.action(for: accepted) == .markReady)

        await viewModel.markReady(orderId)
        let ready = try #require(viewModel.state.orders.first)
        #expect(ready.merchantStep == "ready")
        #expect(MerchantOrdersViewState.action(for: ready) == nil)
        #expect(viewModel.state.message == nil)
    }

    /// The answer to the first accept is lost; the retry carries the same key and the server replays its answer.
    @Test func aRetriedTapReusesItsIdempotencyKey() async throws {
        let backend = TestBackend()
        let orderId = try await backend.placedOrder()
        let (viewModel, http) = makeSUT(backend) { n, _ in n == 2 ? .dropResponse : .none }
        await viewModel.load()

        let accepting = Task { await viewModel.accept(orderId, preparationMinutes: 10) }
        await backend.clock.sleepers(atLeast: 1)
        await backend.clock.advance(by: .seconds(1))
        await accepting.value

        let accepts = http.requests.filter { $0.request.url.path.hasSuffix("/accept") }
        #expect(accepts.count == 2)
        #expect(accepts.map { $0.request.headers["Idempotency-Key"] } == ["merchant-tap-1", "merchant-tap-1"])
        #expect(viewModel.state.orders.first?.merchantStep == "preparing")
        #expect(try backend.store.changes(tripId: orderId).filter { $0.actorRole.rawValue == "merchant" }.count == 1)

        await viewModel.markReady(orderId)
        #expect(http.requests.last?.request.headers["Idempotency-Key"] == "merchant-tap-2")
    }

    @Test func aFailedTapRetriedByHandKeepsItsKey() async throws {
        let backend = TestBackend()
        let orderId = try await backend.placedOrder()
        let (viewModel, http) = makeSUT(backend) { n, _ in (2...4).contains(n) ? .dropRequest : .none }
        await viewModel.load()

        let first = Task { await viewModel.accept(orderId, preparationMinutes: 10) }
        for pause in [1, 2] {
            await backend.clock.sleepers(atLeast: 1)
            await backend.clock.advance(by: .seconds(pause))
        }
        await first.value
        #expect(viewModel.state.message == "Couldn't reach EnRoute. Tap again to retry.")

        await viewModel.accept(orderId, preparationMinutes: 10)
        #expect(viewModel.state.orders.first?.merchantStep == "preparing")
        let keys = http.requests.filter { $0.request.url.path.hasSuffix("/accept") }.map {
            $0.request.headers["Idempotency-Key"]
        }
        #expect(keys == Array(repeating: "merchant-tap-1", count: 4))
    }

    @Test func acceptingAnOrderTheCustomerCancelledShowsWhyAndDropsIt() async throws {
        let backend = TestBackend()
        let orderId = try await backend.placedOrder()
        let (viewModel, _) = makeSUT(backend)
        await viewModel.load()
        let cancelled = await backend.call(
            "POST", "/v1/orders/\(orderId)/cancel", token: backend.token("c1", .customer), json: "{}")
        try #require(cancelled.status == 200)

        await viewModel.accept(orderId, preparationMinutes: 10)
        #expect(viewModel.state.message?.isEmpty == false)
        #expect(viewModel.state.orders.isEmpty)
        #expect(viewModel.state.busy.isEmpty)
    }
}
