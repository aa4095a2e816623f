import Foundation
import Testing
import ClientKit
import HTTPTransport
import EnRouteModels
import TestSupport

/// The chat kit's REST half against the real server in-process: the kit and the routes cannot drift.
@MainActor @Suite struct ChatContractTests {
    @Test func theChatViewModelTalksToTheRealRoutesAndSeesTheClose() async throws {
        let backend = TestBackend()
        let body = try await backend.rideBody(
            "c1", pickup: #"{"lat":60.1699,"lng":24.9384}"#, dropoff: #"{"lat":60.1841,"lng":24.9497}"#)
        let created = await backend.call(
            "POST", APIPath.trips, token: backend.token("c1", .customer), json: body,
            headers: ["Idempotency-Key": "chat-contract-1"])
        let trip = try WireCoding.decoder().decode(Trip.self, from: Data(created.body))
        try #require(await backend.assign(trip.id, to: "p1").status == 200)

        let (http, server) = backend.client("c1", .customer)
        let api = RemoteChatAPI(http: http, server: server)
        let first = try await api.send(tripId: trip.id, messageId: "m-1", text: "Blue door")
        #expect(
            try await api.send(tripId: trip.id, messageId: "m-1", text: "Blue door") == first,
            "a resend answers the stored message")

        let (providerHTTP, providerServer) = backend.client("p1", .provider)
        let vm = ChatViewModel(
            tripId: trip.id, me: .provider, api: RemoteChatAPI(http: providerHTTP, server: providerServer),
            connection: NoConnection(), clock: backend.clock, newMessageId: { "p-1" })
        await vm.send("On my way")
        #expect(vm.state.lines.map(\.status) == [.sent])
        for step in ["driverArrived", "onTrip", "completed"] {
            let r = await backend.call(
                "POST", APIPath.providerTripSteps(trip.id), token: backend.token("p1", .provider),
                json: #"{"changeId":"\#(step)","step":"\#(step)","deviceTime":"2026-10-20T18:40:00Z"}"#)
            try #require(r.status == 200)
        }
        await vm.run()
        #expect(vm.state.lines.map(\.text) == ["Blue door", "On my way"])
        #expect(vm.state.closedReason == "The trip has ended." && !vm.state.showsComposer)
        await #expect(
            throws: APIError.problem(Problem(title: "Conversation Closed", status: 409, detail: "The trip has ended."))
        ) {
            _ = try await api.send(tripId: trip.id, messageId: "m-2", text: "Thanks!")
        }
    }
}

/// A connection that is never there (the REST half alone).
struct NoConnection: ChatConnection {
    func open(tripId: String) async throws -> any ChatSocket { throw HTTPClientError.network("no socket in this test") }
}
