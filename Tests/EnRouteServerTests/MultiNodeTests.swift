import Foundation
import Testing
import ClientKit
import EnRouteModels
import EnRouteDomain
import EnRouteBackend
import TestSupport

/// Several nodes on one store and one live bus (issue 14): what one node commits or ingests reaches the watchers of
/// another, the store's rules hold across nodes, and a lost bus delays the fan-out without losing or repeating a version.
@Suite(.timeLimit(.minutes(1))) struct MultiNodeTests {
    struct Nodes {
        let a: TestBackend, b: TestBackend
        let bus: InMemoryLiveBus
        let clock: ManualClock
        let folder: URL
        func remove() { try? FileManager.default.removeItem(at: folder) }
    }

    /// Two started nodes, `a` and `b`, over one SQLite file, one in-memory bus, one clock and one payment sandbox.
    func makeNodes() async throws -> Nodes {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("enroute-nodes-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let db = folder.appendingPathComponent("db.sqlite").path
        let clock = ManualClock(), bus = InMemoryLiveBus()
        let sandbox = SandboxGateway(baseURL: BackendEffects.sandboxBaseURL, ids: SequentialIDGenerator(prefix: ""), now: { clock.date })
        let a = TestBackend(clock: clock, storage: .sqlite(path: db), payments: sandbox, node: "a", liveBus: bus)
        let b = TestBackend(clock: clock, storage: .sqlite(path: db), payments: sandbox, node: "b", liveBus: bus)
        try await a.backend.start()
        try await b.backend.start()
        return Nodes(a: a, b: b, bus: bus, clock: clock, folder: folder)
    }

    /// A customer's live stream of a ride on `node`, through its router.
    func watch(_ node: TestBackend, _ customer: String, _ tripId: String) async -> AsyncThrowingStream<ServerSentEvent, any Error>.Iterator {
        let (http, server) = node.client(customer, .customer)
        let request = await server.request("GET", "/v1/trips/\(tripId)/events", headers: ["Accept": "text/event-stream"])
        return http.events(request).makeAsyncIterator()
    }

    /// The next `tripUpdated` event's trip, skipping fixes.
    func nextVersion(_ events: inout AsyncThrowingStream<ServerSentEvent, any Error>.Iterator) async throws -> Trip {
        while let event = try await events.next() {
            if event.event == LiveEventName.tripUpdated.rawValue { return try WireCoding.decoder().decode(Trip.self, from: Data(event.data.utf8)) }
        }
        throw Failure("the stream ended")
    }

    func upload(_ node: TestBackend, _ provider: String, batch: String, _ fixes: [LocationFix]) async throws -> Int {
        let body = String(decoding: try WireCoding.encoder().encode(LocationBatch(batchId: batch, fixes: fixes)), as: UTF8.self)
        return await node.call("POST", APIPath.providerLocations, token: node.token(provider, .provider), json: body).status
    }

    func step(_ node: TestBackend, _ tripId: String, _ step: String, change: String, at: Date) async -> Int {
        let body = #"{"changeId":"\#(change)","step":"\#(step)","deviceTime":"\#(ISO8601DateFormatter().string(from: at))"}"#
        return await node.call("POST", "/v1/provider/trips/\(tripId)/steps", token: node.token("p1", .provider), json: body).status
    }

    @Test func aWatcherOnOneNodeSeesEveryVersionAndFixCommittedOnAnother() async throws {
        let nodes = try await makeNodes()
        defer { nodes.remove() }
        let trip = try await nodes.b.requestRide("c1")
        var watcher = await watch(nodes.a, "c1", trip.id)
        #expect(try await nextVersion(&watcher).version == 1)
        #expect(await nodes.b.assign(trip.id, to: "p1").status == 200)
        let assigned = try await nextVersion(&watcher)
        #expect(assigned.version == 2 && assigned.state == .driverAssigned)
        // A fix ingested on b is drawn on a's stream.
        let fix = LocationFix(lat: 60.1705, lng: 24.9384, heading: 180, speed: 6, accuracy: 5, recordedAt: nodes.clock.date)
        #expect(try await upload(nodes.b, "p1", batch: "batch-0001", [fix]) == 200)
        var moved: ServerSentEvent?
        while let event = try await watcher.next() { if event.event == LiveEventName.driverMoved.rawValue { moved = event; break } }
        let location = try WireCoding.decoder().decode(DriverLocation.self, from: Data(try #require(moved).data.utf8))
        #expect(abs(location.coordinate.lat - fix.lat) < 1e-9 && abs(location.coordinate.lng - fix.lng) < 1e-9)
        // The next change, committed on b, carries the fix a already holds, and a's tracking read agrees.
        #expect(await step(nodes.b, trip.id, "driverArrived", change: "step-arrived-1", at: nodes.clock.date) == 200)
        let arrived = try await nextVersion(&watcher)
        #expect(arrived.version == 3 && arrived.state == .driverArrived)
        #expect(try nodes.a.service.cached(trip.id)?.version == 3)
        #expect(nodes.a.backend.fanOut?.counters.applied ?? 0 >= 3)
    }

    @Test func oneIdempotencyKeySentToBothNodesAtOnceCreatesOneTrip() async throws {
        let nodes = try await makeNodes()
        defer { nodes.remove() }
        let body = try await nodes.a.rideBody("c1")
        let token = nodes.a.token("c1", .customer)
        async let first = nodes.a.call("POST", APIPath.trips, token: token, json: body, headers: ["Idempotency-Key": "one-key-two-nodes"])
        async let second = nodes.b.call("POST", APIPath.trips, token: token, json: body, headers: ["Idempotency-Key": "one-key-two-nodes"])
        let answers = await [first, second]
        let created = answers.filter { $0.status == 201 }
        // One created it; the other replayed its answer, or was told the first is still running (409, retry).
        #expect(created.count >= 1)
        let ids = Set(try created.map { try WireCoding.decoder().decode(Trip.self, from: Data($0.body)).id })
        #expect(ids.count == 1)
        #expect(try nodes.a.backend.store.trips(.party(.customer, id: "c1"), after: nil, limit: 10).trips.count == 1)
    }

    @Test func ridesForOneCustomerRequestedOnBothNodesAtOnceLeaveOneActive() async throws {
        let nodes = try await makeNodes()
        defer { nodes.remove() }
        let token = nodes.a.token("c1", .customer)
        let bodyA = try await nodes.a.rideBody("c1"), bodyB = try await nodes.b.rideBody("c1")
        async let first = nodes.a.call("POST", APIPath.trips, token: token, json: bodyA, headers: ["Idempotency-Key": "ride-on-node-a"])
        async let second = nodes.b.call("POST", APIPath.trips, token: token, json: bodyB, headers: ["Idempotency-Key": "ride-on-node-b"])
        let statuses = await [first.status, second.status].sorted()
        #expect(statuses == [201, 409])
        #expect(try nodes.a.backend.store.activeTrips().filter { $0.customerId == "c1" }.count == 1)
    }

    @Test func aLostBusDelaysTheFanOutAndLosesOrRepeatsNoVersion() async throws {
        let nodes = try await makeNodes()
        defer { nodes.remove() }
        let trip = try await nodes.b.requestRide("c1")
        var watcher = await watch(nodes.a, "c1", trip.id)
        #expect(try await nextVersion(&watcher).version == 1)
        nodes.bus.fail()
        #expect(await nodes.b.assign(trip.id, to: "p1").status == 200)
        #expect(await step(nodes.b, trip.id, "driverArrived", change: "step-arrived-1", at: nodes.clock.date) == 200)
        // Both versions wait in the shared outbox while the bus is down.
        let waiting = try await nodes.b.backend.store.dueOutbox(topic: FanOut.topic, now: nodes.clock.date, limit: 10)
        #expect(waiting.count >= 2)
        nodes.bus.restore()
        // a's reader subscribes again after its retry delay and reloads from the store; b's relay tries again.
        let store = nodes.b.backend.store, clock = nodes.clock, fanOut = try #require(nodes.a.backend.fanOut)
        try await eventually("a resynchronised and b's outbox drained", advancing: clock, by: .seconds(1), steps: 10) {
            let drained = try await store.dueOutbox(topic: FanOut.topic, now: clock.date, limit: 10).isEmpty
            return drained && fanOut.counters.resyncs == 1
        }
        let resumed = try await nextVersion(&watcher)
        #expect(resumed.version == 3 && resumed.state == .driverArrived)   // the newest; versions only rise
        // The relayed copies of versions 2 and 3 arrive after the resync and change nothing: the next event is the next version.
        #expect(await step(nodes.b, trip.id, "onTrip", change: "step-started-1", at: nodes.clock.date) == 200)
        #expect(try await nextVersion(&watcher).version == 4)
    }
}
