import Foundation
import Testing
import HTTPTransport
import CurlTransport
import EnRouteModels
import EnRouteDomain
import EnRouteAPI
import HTTPEngine
import TestSupport

/// The provider's live stream (`GET /v1/provider/events`, SSE and WebSocket) and a whole dispatch over real sockets.
@Suite(.serialized, .timeLimit(.minutes(1))) struct ProviderLiveTests {
    @Test func theStreamOpensWithTheLiveOfferThenCarriesWithdrawalsAndTripChanges() async throws {
        let sut = try ProviderBackend()
        await sut.online("p1", at: ProviderBackend.north(100))
        var inbox = ProviderInbox(sut.providers, "p1")
        let trip = try await sut.requestRide()
        let offer = try await inbox.offer()
        // Connecting after the offer was sent still shows it first.
        var events = await sut.stream("p1", .provider, "/v1/provider/events").makeAsyncIterator()
        let opening = try #require(try await events.next())
        #expect(opening.event == "offer" && opening.id != nil)
        #expect(try WireCoding.decoder().decode(Offer.self, from: Data(opening.data.utf8)) == offer)
        #expect(
            await sut.call("POST", "/v1/provider/offers/\(offer.offerId)/accept", as: "p1", .provider).status == 200)
        let assigned = try #require(try await events.next())
        #expect(assigned.event == "tripUpdated")
        #expect(
            try WireCoding.decoder().decode(TripSnapshot.self, from: Data(assigned.data.utf8)).status
                == "driverAssigned")
        // The customer cancels: the provider hears it on the same stream.
        #expect(await sut.call("POST", "/v1/trips/\(trip.id)/cancel", as: "c1", .customer).status == 200)
        let cancelled = try #require(try await events.next())
        #expect(cancelled.event == "tripUpdated")
        let snapshot = try WireCoding.decoder().decode(TripSnapshot.self, from: Data(cancelled.data.utf8))
        #expect(snapshot.status == "cancelled" && snapshot.cancelledBy == "customer")
        #expect(Int(cancelled.id ?? "") ?? 0 > Int(assigned.id ?? "") ?? 0, "event ids grow")
    }

    @Test func aReconnectingProviderSeesItsActiveTrips() async throws {
        let sut = try ProviderBackend(startDispatch: false)
        let trip = try await sut.requestRide()
        #expect(await sut.assign(trip.id, to: "p1").status == 200)
        var events = await sut.stream("p1", .provider, "/v1/provider/events").makeAsyncIterator()
        let first = try #require(try await events.next())
        #expect(first.event == "tripUpdated")
        #expect(try WireCoding.decoder().decode(TripSnapshot.self, from: Data(first.data.utf8)).id == trip.id)
    }

    @Test func onlyProvidersMayOpenTheStream() async throws {
        let sut = try ProviderBackend(startDispatch: false)
        #expect(await sut.call("GET", "/v1/provider/events", as: "c1", .customer).status == 403)
        #expect(
            await sut.call("POST", "/v1/provider/availability", as: "c1", .customer, json: #"{"online":true}"#).status
                == 403)
        let bad = await sut.call(
            "POST", "/v1/provider/availability", as: "p1", .provider,
            json: #"{"online":true,"position":{"lat":95,"lng":0}}"#)
        #expect(bad.status == 422)
        let ok = await sut.call("POST", "/v1/provider/availability", as: "p1", .provider, json: #"{"online":true}"#)
        #expect(
            try WireCoding.decoder().decode(AvailabilityState.self, from: Data(ok.body))
                == AvailabilityState(online: true))
    }

    // MARK: - Over real sockets

    struct Live {
        let sut: ProviderBackend
        let server: HTTPServer
        let http = CurlHTTPClient(defaultTimeout: .seconds(10))
        var base: URL { URL(string: "http://127.0.0.1:\(server.port)")! }

        func api(_ account: String, _ role: Party) -> APIServer {
            APIServer(baseURL: base, credentials: StaticAccessToken(sut.token(account, role)))
        }

        func send(
            _ account: String, _ role: Party, _ method: String, _ path: String, json: String? = nil,
            headers: [String: String] = [:]
        ) async throws -> HTTPClientResponse {
            try await http.send(
                await api(account, role).request(method, path, body: json.map { Data($0.utf8) }, headers: headers))
        }

        func events(
            _ account: String, _ role: Party, _ path: String
        ) async -> AsyncThrowingStream<ServerSentEvent, any Error> {
            http.events(await api(account, role).request("GET", path, headers: ["Accept": "text/event-stream"]))
        }
    }

    func makeLive() throws -> Live {
        let sut = try ProviderBackend()
        var config = HTTPServerConfiguration()
        config.port = 0
        let server = HTTPServer(router: sut.router, configuration: config)
        try server.start()
        return Live(sut: sut, server: server)
    }

    /// Reads a stream until an event named `name` arrives.
    func next(
        _ name: String, _ iterator: inout AsyncThrowingStream<ServerSentEvent, any Error>.Iterator
    ) async throws -> ServerSentEvent {
        while let event = try await iterator.next() { if event.event == name { return event } }
        throw Failure("the stream ended before \(name)")
    }

    @Test func aCustomerWatchesTheSecondProviderAcceptAndDriveAfterTheFirstDeclines() async throws {
        let live = try makeLive()
        let clock = live.sut.clock
        #expect(
            try await live.send(
                "p1", .provider, "POST", "/v1/provider/availability",
                json: #"{"online":true,"position":{"lat":60.1708,"lng":24.9384}}"#
            ).status == 200)
        #expect(
            try await live.send(
                "p2", .provider, "POST", "/v1/provider/availability",
                json: #"{"online":true,"position":{"lat":60.1730,"lng":24.9384}}"#
            ).status == 200)
        var p1 = await live.events("p1", .provider, "/v1/provider/events").makeAsyncIterator()
        var p2 = await live.events("p2", .provider, "/v1/provider/events").makeAsyncIterator()
        try await eventually("both providers' streams are open", within: .seconds(30)) {
            live.sut.providers.events.streamCount("p1") > 0 && live.sut.providers.events.streamCount("p2") > 0
        }

        let created = try await live.send(
            "c1", .customer, "POST", "/v1/trips", json: try await live.sut.backend.rideBody("c1"),
            headers: ["Idempotency-Key": UUID().uuidString])
        let trip = try created.decode(Trip.self)
        var watcher = await live.events("c1", .customer, "/v1/trips/\(trip.id)/events").makeAsyncIterator()
        #expect(try await next("tripUpdated", &watcher).data.contains(#""state":"searching""#))

        let first = try WireCoding.decoder().decode(Offer.self, from: Data(try await next("offer", &p1).data.utf8))
        #expect(
            try await live.send("p1", .provider, "POST", "/v1/provider/offers/\(first.offerId)/decline").status == 204)
        let second = try WireCoding.decoder().decode(Offer.self, from: Data(try await next("offer", &p2).data.utf8))
        #expect(second.tripId == trip.id)
        let accepted = try await live.send("p2", .provider, "POST", "/v1/provider/offers/\(second.offerId)/accept")
        #expect(accepted.status == 200)
        #expect(try accepted.decode(TripSnapshot.self).providerId == "p2")
        let assigned = try WireCoding.decoder().decode(
            Trip.self, from: Data(try await next("tripUpdated", &watcher).data.utf8))
        #expect(assigned.state == .driverAssigned && assigned.driver?.id == "p2")

        // p2 drives towards the pickup: three batches of one fix, a second apart.
        for i in 1...3 {
            await clock.advance(by: .seconds(1))
            let fix =
                #"{"lat":\#(60.1730 - Double(i) * 0.0001),"lng":24.9384,"heading":180,"speed":11,"accuracy":6,"#
                + #""recordedAt":"\#(ISO8601.format(clock.date))"}"#
            let r = try await live.send(
                "p2", .provider, "POST", "/v1/provider/locations", json: #"{"batchId":"b\#(i)","fixes":[\#(fix)]}"#)
            #expect(
                try r.decode(LocationBatchResult.self) == LocationBatchResult(batchId: "b\(i)", accepted: 1, dropped: 0)
            )
            let moved = try WireCoding.decoder().decode(
                DriverLocation.self, from: Data(try await next("driverMoved", &watcher).data.utf8))
            #expect(moved.seq == Int64(i))
            #expect(abs(moved.coordinate.lat - (60.1730 - Double(i) * 0.0001)) < 1e-9)
        }
        #expect(try await live.sut.paths.path(tripId: trip.id).count == 3)
        await live.server.shutdown()
    }

    @Test func theProviderStreamAlsoSpeaksWebSocket() async throws {
        let live = try makeLive()
        await live.sut.online("p1", at: ProviderBackend.north(100))
        let client = try TCPTestClient(port: live.server.port)
        client.write(
            "GET /v1/provider/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
                + "\(live.sut.token("p1", .provider))\r\nUpgrade: websocket\r\nConnection: "
                + "Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
        )
        try await client.read(untilContains: "\r\n\r\n")
        #expect(client.text.hasPrefix("HTTP/1.1 101"))
        client.consume(client.received.firstRange(of: Array("\r\n\r\n".utf8))!.upperBound)
        try await eventually("p1's stream is open", within: .seconds(30)) {
            live.sut.providers.events.streamCount("p1") > 0
        }
        let trip = try await live.sut.requestRide()
        let frame = try await client.readWebSocketFrame()
        let envelope = try WireCoding.decoder().decode(LiveEnvelope<Offer>.self, from: Data(frame.payload))
        #expect(envelope.type == "offer" && envelope.data.tripId == trip.id && !envelope.id.isEmpty)
        // Shutting down says "going away"; the client's answer ends the connection at once.
        let shutdown = Task { await live.server.shutdown() }
        var close = try await client.readWebSocketFrame()
        while close.opcode != 0x8 { close = try await client.readWebSocketFrame() }
        #expect(close.payload.prefix(2) == [0x03, 0xE9])
        client.write(TCPTestClient.webSocketFrame(opcode: 0x8, payload: [0x03, 0xE9]))
        try await client.readUntilClosed()
        await shutdown.value
    }
}
