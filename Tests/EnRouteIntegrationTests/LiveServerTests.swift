import Foundation
import Testing
import Synchronization
import HTTPTransport
import CurlTransport
import EnRouteModels
import EnRouteDomain
import EnRouteAPI
import HTTPEngine
import TestSupport

/// Whole trips over real sockets: each party with its own token, a watcher on the live stream.
@Suite(.serialized) struct LiveServerTests {
    struct Live {
        let backend: TestBackend
        let server: HTTPServer
        // a guard against a hang: the ride's stream lasts the whole test
        let http = CurlHTTPClient(defaultTimeout: .seconds(60))
        var base: URL { URL(string: "http://127.0.0.1:\(server.port)")! }

        func api(_ account: String, _ role: Party) -> APIServer {
            APIServer(baseURL: base, credentials: StaticAccessToken(backend.token(account, role)))
        }

        func send(
            _ account: String, _ role: Party, _ method: String, _ path: String, json: String? = nil,
            headers: [String: String] = [:]
        ) async throws -> HTTPClientResponse {
            let request = await api(account, role).request(
                method, path, body: json.map { Data($0.utf8) }, headers: headers)
            return try await http.send(request)
        }
    }

    func makeSUT() throws -> Live {
        let backend = TestBackend()
        var config = HTTPServerConfiguration()
        config.port = 0
        let server = HTTPServer(router: backend.router, configuration: config)
        try server.start()
        return Live(backend: backend, server: server)
    }

    /// Collects a live stream's events until it ends.
    func watch(_ live: Live, _ path: String, as account: String) async -> Task<[ServerSentEvent], any Error> {
        let request = await live.api(account, .customer).request("GET", path, headers: ["Accept": "text/event-stream"])
        let events = live.http.events(request)
        return Task {
            var seen: [ServerSentEvent] = []
            for try await event in events { seen.append(event) }
            return seen
        }
    }

    @Test func aWholeRideWithEveryPartyWhileTheRiderWatches() async throws {
        let live = try makeSUT()
        let created = try await live.send(
            "c1", .customer, "POST", "/v1/trips", json: try await live.backend.rideBody("c1"),
            headers: ["Idempotency-Key": UUID().uuidString])
        let trip = try created.decode(Trip.self)
        let watcher = await watch(live, "/v1/trips/\(trip.id)/events", as: "c1")
        // The stream always opens with the current trip; wait for the watcher to be attached before moving.
        try await eventually("the trip has a watcher", within: .seconds(30)) {
            live.backend.api.watcherCount(trip.id) > 0
        }

        #expect(
            try await live.send("ops", .ops, "POST", "/v1/ops/trips/\(trip.id)/assign", json: #"{"providerId":"p1"}"#)
                .status == 200)
        let fix =
            #"{"batchId":"b1","fixes":[{"lat":60.171,"lng":24.939,"heading":45,"speed":7,"accuracy":5,"#
            + #""recordedAt":"\#(ISO8601.format(live.backend.clock.date))"}]}"#
        #expect(try await live.send("p1", .provider, "POST", "/v1/provider/locations", json: fix).status == 200)
        for step in ["driverArrived", "onTrip", "completed"] {
            let body = #"{"changeId":"\#(UUID().uuidString)","step":"\#(step)","deviceTime":"2026-10-20T18:40:00Z"}"#
            #expect(
                try await live.send("p1", .provider, "POST", "/v1/provider/trips/\(trip.id)/steps", json: body).status
                    == 200)
        }
        let events = try await watcher.value  // the server ends the stream once the ride is over
        let trips = try events.filter { $0.event == "tripUpdated" }.map {
            try WireCoding.decoder().decode(Trip.self, from: Data($0.data.utf8))
        }
        #expect(trips.first?.state == .searching)
        #expect(trips.last?.state == .completed)
        #expect(zip(trips, trips.dropFirst()).allSatisfy { $0.version < $1.version }, "versions only rise")
        #expect(trips.map(\.version) == [1, 2, 3, 4, 5])
        let moved = events.filter { $0.event == "driverMoved" }
        #expect(moved.count == 1)
        #expect(
            try WireCoding.decoder().decode(DriverLocation.self, from: Data(moved[0].data.utf8)).coordinate
                == Coordinate(lat: 60.171, lng: 24.939))
        #expect(events.allSatisfy { $0.id != nil })
        await live.server.shutdown()
    }

    @Test func aWholeDeliveryWhileTheCustomerWatchesTracking() async throws {
        let live = try makeSUT()
        let placed = try await live.send(
            "c1", .customer, "POST", "/v1/orders", json: try await live.backend.orderBody("c1"),
            headers: ["Idempotency-Key": UUID().uuidString])
        #expect(placed.status == 201)
        let order = try placed.decode(TrackingDTO.self)
        let watcher = await watch(live, "/v1/orders/\(order.orderId)/events", as: "c1")
        try await eventually("the order has a watcher", within: .seconds(30)) {
            live.backend.api.watcherCount(order.orderId) > 0
        }

        #expect(
            try await live.send(
                "m1", .merchant, "POST", "/v1/merchant/orders/\(order.orderId)/accept",
                json: #"{"preparationMinutes":10}"#
            ).status == 200)
        #expect(
            try await live.send(
                "ops", .ops, "POST", "/v1/ops/trips/\(order.orderId)/assign", json: #"{"providerId":"p1"}"#
            ).status == 200)
        #expect(
            try await live.send("m1", .merchant, "POST", "/v1/merchant/orders/\(order.orderId)/ready").status == 200)
        for step in ["onTheWay", "arriving", "delivered"] {
            let body = #"{"changeId":"\#(UUID().uuidString)","step":"\#(step)","deviceTime":"2026-10-20T18:40:00Z"}"#
            #expect(
                try await live.send("p1", .provider, "POST", "/v1/provider/trips/\(order.orderId)/steps", json: body)
                    .status == 200)
        }
        let events = try await watcher.value
        #expect(events.allSatisfy { $0.event == "tracking" })
        let seedKeys: Set<String> = [
            "orderId", "version", "status", "problem", "eta", "rider", "destination", "generatedAt",
        ]
        let snapshots = try events.map { try WireCoding.decoder().decode(TrackingDTO.self, from: Data($0.data.utf8)) }
        #expect(snapshots.map(\.status) == [.placed, .picking, .picking, .picking, .onTheWay, .arriving, .delivered])
        // The seed's keys, and the stops before this order's while the courier has it (from the assignment, the
        // third event, until it is delivered): none, since it is carried alone.
        for (i, event) in events.enumerated() {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(event.data.utf8)) as? [String: Any])
            let courierHasIt = (2...5).contains(i)
            #expect(Set(object.keys) == seedKeys.union(courierHasIt ? ["stopsBefore"] : []))
            #expect(snapshots[i].stopsBefore == (courierHasIt ? 0 : nil))
        }
        #expect(zip(snapshots, snapshots.dropFirst()).allSatisfy { $0.version < $1.version }, "versions only rise")
        let tracking = try await live.send("c1", .customer, "GET", "/v1/orders/\(order.orderId)/tracking")
        #expect(try tracking.decode(TrackingDTO.self).status == .delivered)
        await live.server.shutdown()
    }

    @Test(arguments: ["/v1/trips/{id}/events", "/v1/trips/{id}"])
    func theLiveStreamAlsoSpeaksWebSocket(path: String) async throws {
        let live = try makeSUT()
        let trip = try await live.send(
            "c1", .customer, "POST", "/v1/trips", json: try await live.backend.rideBody("c1"),
            headers: ["Idempotency-Key": UUID().uuidString]
        ).decode(Trip.self)
        let client = try TCPTestClient(port: live.server.port)
        client.write(
            "GET \(path.replacingOccurrences(of: "{id}", with: trip.id)) HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
                + "\(live.backend.token("c1", .customer))\r\nUpgrade: websocket\r\nConnection: "
                + "Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
        )
        try await client.read(untilContains: "\r\n\r\n")
        #expect(client.text.hasPrefix("HTTP/1.1 101"))
        client.consume(client.received.firstRange(of: Array("\r\n\r\n".utf8))!.upperBound)
        let first = try await client.readWebSocketFrame()
        let envelope = try WireCoding.decoder().decode(LiveEnvelope<Trip>.self, from: Data(first.payload))
        #expect(envelope.type == "tripUpdated" && envelope.data.version == 1)
        _ = try await live.send("c1", .customer, "POST", "/v1/trips/\(trip.id)/cancel")
        let second = try WireCoding.decoder().decode(
            LiveEnvelope<Trip>.self, from: Data(await client.readWebSocketFrame().payload))
        #expect(second.data.state == .cancelled && second.id == "2")
        // A finished trip's stream ends with a normal close; answering it ends the connection.
        let close = try await client.readWebSocketFrame()
        #expect(close.opcode == 0x8 && close.payload.prefix(2) == [0x03, 0xE8])
        client.write(TCPTestClient.webSocketFrame(opcode: 0x8, payload: [0x03, 0xE8]))
        try await client.readUntilClosed()
        await live.server.shutdown()
    }

    /// A provider who gives the ride up loses the stream they hold open: the WebSocket closes with 1008, the SSE
    /// stream ends after `accessEnded`, before the ride's next version goes out.
    @Test(arguments: [true, false])
    func aProviderWhoGivesTheRideUpLosesTheOpenStream(webSocket: Bool) async throws {
        let live = try makeSUT()
        let body = try await live.backend.rideBody("c1")
        let trip = try await live.send(
            "c1", .customer, "POST", "/v1/trips", json: body,
            headers: ["Idempotency-Key": UUID().uuidString]
        ).decode(Trip.self)
        let assign = #"{"providerId":"p1"}"#
        #expect(try await live.send("ops", .ops, "POST", "/v1/ops/trips/\(trip.id)/assign", json: assign).status == 200)
        let client = try TCPTestClient(port: live.server.port)
        let auth = "Host: x\r\nAuthorization: Bearer \(live.backend.token("p1", .provider))\r\n"
        if webSocket {
            client.write(
                "GET /v1/trips/\(trip.id) HTTP/1.1\r\n\(auth)Upgrade: websocket\r\nConnection: Upgrade\r\n"
                    + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
            try await client.read(untilContains: "\r\n\r\n")
            #expect(client.text.hasPrefix("HTTP/1.1 101"))
            client.consume(client.received.firstRange(of: Array("\r\n\r\n".utf8))!.upperBound)
            let frame = try await client.readWebSocketFrame()
            let first = try WireCoding.decoder().decode(LiveEnvelope<Trip>.self, from: Data(frame.payload))
            #expect(first.id == "2")
        } else {
            client.write("GET /v1/trips/\(trip.id)/events HTTP/1.1\r\n\(auth)Accept: text/event-stream\r\n\r\n")
            try await client.read(untilContains: "id: 2\n")
        }
        let giveUp = #"{"changeId":"\#(UUID().uuidString)","step":"cancelled","deviceTime":"2026-10-20T18:40:00Z"}"#
        let steps = "/v1/provider/trips/\(trip.id)/steps"
        #expect(try await live.send("p1", .provider, "POST", steps, json: giveUp).status == 200)
        if webSocket {
            let close = try await client.readWebSocketFrame()
            #expect(close.opcode == 0x8 && close.payload.prefix(2) == [0x03, 0xF0], "a close with 1008")
            client.write(TCPTestClient.webSocketFrame(opcode: 0x8, payload: [0x03, 0xF0]))
            try await client.readUntilClosed()
        } else {
            try await client.read(untilContains: "event: accessEnded")
            try await client.read(untilContains: "\r\n0\r\n\r\n")
            #expect(!client.text.contains("id: 3\nevent: tripUpdated"))
        }
        await live.server.shutdown()
    }

    /// HEAD on a trip's live stream answers the head alone, and the request pipelined behind it is answered too.
    @Test func headOnATripsLiveStreamSendsNoBody() async throws {
        let live = try makeSUT()
        let body = try await live.backend.rideBody("c1")
        let trip = try await live.send(
            "c1", .customer, "POST", "/v1/trips", json: body,
            headers: ["Idempotency-Key": UUID().uuidString]
        ).decode(Trip.self)
        let client = try TCPTestClient(port: live.server.port)
        let auth = "Authorization: Bearer \(live.backend.token("c1", .customer))"
        client.write(
            "HEAD /v1/trips/\(trip.id)/events HTTP/1.1\r\nHost: x\r\n\(auth)\r\n\r\n"
                + "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        try await client.read(untilContains: #"{"status":"ok"}"#)
        #expect(client.text.hasPrefix("HTTP/1.1 200") && client.text.contains("text/event-stream"))
        #expect(!client.text.contains("tripUpdated"))
        #expect(live.backend.api.watcherCount(trip.id) == 0)
        await live.server.shutdown()
    }
}
