import Foundation
import Testing
import HTTPTransport
import EnRouteModels
import EnRouteDomain
import TestSupport

/// A trip's live streams last while their watcher is a party to the trip: a provider who gives the trip up hears
/// `accessEnded` and the stream ends, before anything of the next provider goes out.
@Suite struct LiveStreamAccessTests {
    func makeSUT() -> TestBackend { TestBackend() }

    /// The live stream of `path` as `account`, once it has its opening event (so it is a member of the trip's group).
    func watch(
        _ backend: TestBackend, _ account: String, _ role: Party, _ path: String
    ) async throws
        -> (first: ServerSentEvent, rest: AsyncThrowingStream<ServerSentEvent, any Error>.Iterator)
    {
        let (http, server) = backend.client(account, role)
        let request = await server.request("GET", path, headers: ["Accept": "text/event-stream"])
        var events = http.events(request).makeAsyncIterator()
        let first = try #require(try await events.next())
        return (first, events)
    }

    /// Every event left on the stream, to its end.
    func rest(
        _ events: inout AsyncThrowingStream<ServerSentEvent, any Error>.Iterator
    ) async throws -> [ServerSentEvent] {
        var seen: [ServerSentEvent] = []
        while let event = try await events.next() { seen.append(event) }
        return seen
    }

    @Test func aDriverWhoGivesTheRideUpHearsAccessEndedAndNothingOfTheNextDriver() async throws {
        let backend = makeSUT()
        let ride = try await backend.requestRide("c1")
        #expect(await backend.assign(ride.id, to: "p1").status == 200)
        var (first, events) = try await watch(backend, "p1", .provider, "/v1/trips/\(ride.id)/events")
        #expect(first.event == "tripUpdated" && first.id == "2")

        #expect(await backend.step(ride.id, "cancelled", provider: "p1").status == 200)
        #expect(await backend.assign(ride.id, to: "p2").status == 200)
        let fix =
            #"{"batchId":"b1","fixes":[{"lat":60.171,"lng":24.939,"heading":45,"speed":7,"accuracy":5,"#
            + #""recordedAt":"\#(ISO8601.format(backend.clock.date))"}]}"#
        #expect(
            await backend.call("POST", "/v1/provider/locations", token: backend.token("p2", .provider), json: fix)
                .status == 200)
        // The ride ends, so that a stream that never ended would still come to an end here.
        #expect(
            await backend.call("POST", "/v1/trips/\(ride.id)/cancel", token: backend.token("c1", .customer)).status
                == 200)

        let seen = try await rest(&events)
        #expect(seen.map(\.event) == ["accessEnded"])
        let ended = try WireCoding.decoder().decode(AccessEnded.self, from: Data(try #require(seen.first).data.utf8))
        #expect(ended.tripId == ride.id)
        #expect(!seen.contains { $0.data.contains("p2") })
        #expect(
            await backend.call("GET", "/v1/trips/\(ride.id)/events", token: backend.token("p1", .provider)).status
                == 404)
    }

    @Test func aCourierWhoGivesTheOrderUpHearsAccessEndedAndNothingOfTheNextCourier() async throws {
        let backend = makeSUT()
        let order = try await backend.placeOrder("c1")
        let merchant = backend.token("m1", .merchant)
        #expect(
            await backend.call(
                "POST", "/v1/merchant/orders/\(order.orderId)/accept", token: merchant,
                json: #"{"preparationMinutes":10}"#
            ).status == 200)
        #expect(await backend.assign(order.orderId, to: "p1").status == 200)
        var (first, events) = try await watch(backend, "p1", .provider, "/v1/orders/\(order.orderId)/events")
        #expect(first.event == "tracking")

        #expect(await backend.step(order.orderId, "cancelled", provider: "p1").status == 200)
        #expect(await backend.assign(order.orderId, to: "p2").status == 200)
        #expect(await backend.call("POST", "/v1/merchant/orders/\(order.orderId)/ready", token: merchant).status == 200)
        for step in ["onTheWay", "arriving", "delivered"] {
            #expect(await backend.step(order.orderId, step, provider: "p2").status == 200)
        }

        let seen = try await rest(&events)
        #expect(seen.map(\.event) == ["accessEnded"])
    }

    /// The customer and ops keep watching across the change of provider.
    @Test func theCustomerAndOpsKeepTheirStreamsWhenTheProviderChanges() async throws {
        let backend = makeSUT()
        let ride = try await backend.requestRide("c1")
        #expect(await backend.assign(ride.id, to: "p1").status == 200)
        let (_, customer) = try await watch(backend, "c1", .customer, "/v1/trips/\(ride.id)/events")
        let (_, ops) = try await watch(backend, "ops", .ops, "/v1/trips/\(ride.id)/events")
        #expect(await backend.step(ride.id, "cancelled", provider: "p1").status == 200)
        #expect(await backend.assign(ride.id, to: "p2").status == 200)
        #expect(
            await backend.call("POST", "/v1/trips/\(ride.id)/cancel", token: backend.token("c1", .customer)).status
                == 200)
        for var events in [customer, ops] {
            #expect(try await rest(&events).map { $0.id ?? "" } == ["3", "4", "5"])
        }
    }
}
