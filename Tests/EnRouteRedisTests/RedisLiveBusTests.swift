import Foundation
import Testing
import HTTPTransport
import EnRouteModels
import EnRouteDomain
import EnRouteSandbox
import EnRouteBackend
import EnRouteRedis
import RedisClient
import TestSupport

/// Two nodes over one SQLite file whose live bus is Redis streams (`RedisLiveBus`): what one commits and ingests
/// reaches the other's watchers, and a node cut off from Redis resumes with nothing missed once the link is back.
@Suite(.enabled(if: TestRedisServer.url != nil, "needs ENROUTE_TEST_REDIS_URL"), .timeLimit(.minutes(1)))
struct RedisLiveBusTests {
    struct Nodes {
        let a: TestBackend, b: TestBackend
        let clock: ManualClock
        let folder: URL
        func remove() { try? FileManager.default.removeItem(at: folder) }
    }

    /// Nodes `a` and `b` on one SQLite file and one Redis (under a fresh key prefix), for the live bus and the provider
    /// locations; `a` reaches Redis through `viaA` when given.
    func makeNodes(viaA proxy: TCPFaultProxy? = nil, prefix: String = "test-\(UUID().uuidString)") async throws -> Nodes
    {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "enroute-redis-nodes-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let db = folder.appendingPathComponent("db.sqlite").path
        let direct = try RedisConfiguration(url: TestRedisServer.url ?? "", commandTimeout: .seconds(2))
        var throughProxy = direct
        if let proxy {
            throughProxy = RedisConfiguration(host: "127.0.0.1", port: Int(proxy.port), commandTimeout: .seconds(2))
        }
        let clock = ManualClock()
        let sandbox = SandboxGateway(
            baseURL: BackendEffects.sandboxBaseURL, ids: SequentialIDGenerator(prefix: ""), now: { clock.date })
        let a = TestBackend(
            clock: clock, storage: .sqlite(path: db), payments: sandbox, node: "a",
            liveBus: RedisLiveBus(throughProxy, prefix: prefix, block: .milliseconds(200)),
            locations: RedisProviderLocations(redis: RedisConnection(throughProxy), prefix: prefix, now: { clock.date })
        )
        let b = TestBackend(
            clock: clock, storage: .sqlite(path: db), payments: sandbox, node: "b",
            liveBus: RedisLiveBus(direct, prefix: prefix, block: .milliseconds(200)),
            locations: RedisProviderLocations(redis: RedisConnection(direct), prefix: prefix, now: { clock.date }))
        try await a.backend.start()
        try await b.backend.start()
        return Nodes(a: a, b: b, clock: clock, folder: folder)
    }

    func watch(
        _ node: TestBackend, _ customer: String, _ tripId: String
    ) async -> AsyncThrowingStream<ServerSentEvent, any Error>.Iterator {
        let (http, server) = node.client(customer, .customer)
        let request = await server.request(
            "GET", "/v1/trips/\(tripId)/events", headers: ["Accept": "text/event-stream"])
        return http.events(request).makeAsyncIterator()
    }

    func nextVersion(_ events: inout AsyncThrowingStream<ServerSentEvent, any Error>.Iterator) async throws -> Trip {
        while let event = try await events.next() {
            if event.event == LiveEventName.tripUpdated.rawValue {
                return try WireCoding.decoder().decode(Trip.self, from: Data(event.data.utf8))
            }
        }
        throw RedisBusTestFailure("the stream ended")
    }

    /// A ride for c1 requested on `node`, with a fresh quote and a saved card.
    func requestRide(on node: TestBackend) async throws -> Trip {
        let body = try await node.rideBody(
            "c1", pickup: #"{"lat":60.1699,"lng":24.9384}"#, dropoff: #"{"lat":60.1841,"lng":24.9497}"#)
        let r = await node.call(
            "POST", APIPath.trips, token: node.token("c1", .customer), json: body,
            headers: ["Idempotency-Key": UUID().uuidString])
        guard r.status == 201 else {
            throw RedisBusTestFailure("request ride: \(r.status) \(String(decoding: r.body, as: UTF8.self))")
        }
        return try WireCoding.decoder().decode(Trip.self, from: Data(r.body))
    }

    @Test func aWatcherOnOneNodeSeesVersionsAndFixesMadeOnAnotherThroughRedis() async throws {
        let nodes = try await makeNodes()
        defer { nodes.remove() }
        let trip = try await requestRide(on: nodes.b)
        var watcher = await watch(nodes.a, "c1", trip.id)
        #expect(try await nextVersion(&watcher).version == 1)
        #expect(await nodes.b.assign(trip.id, to: "p1").status == 200)
        #expect(try await nextVersion(&watcher).state == .driverAssigned)
        let fix = LocationFix(
            lat: 60.1705, lng: 24.9384, heading: 180, speed: 6, accuracy: 5, recordedAt: nodes.clock.date)
        let batch = String(
            decoding: try WireCoding.encoder().encode(LocationBatch(batchId: "batch-0001", fixes: [fix])), as: UTF8.self
        )
        #expect(
            await nodes.b.call("POST", APIPath.providerLocations, token: nodes.b.token("p1", .provider), json: batch)
                .status == 200)
        while let event = try await watcher.next() {
            guard event.event == LiveEventName.driverMoved.rawValue else { continue }
            let location = try WireCoding.decoder().decode(DriverLocation.self, from: Data(event.data.utf8))
            #expect(abs(location.coordinate.lat - fix.lat) < 1e-9)
            break
        }
    }

    @Test func aNodeCutOffFromRedisCatchesUpFromTheStoreWhenTheLinkIsBack() async throws {
        let target = try RedisConfiguration(url: TestRedisServer.url ?? "")
        let proxy = try TCPFaultProxy(forwardingTo: target.port, host: target.host)
        let nodes = try await makeNodes(viaA: proxy)
        defer { nodes.remove() }
        let trip = try await requestRide(on: nodes.b)
        var watcher = await watch(nodes.a, "c1", trip.id)
        #expect(try await nextVersion(&watcher).version == 1)
        try await proxy.cut()
        #expect(await nodes.b.assign(trip.id, to: "p1").status == 200)
        #expect(try nodes.a.service.cached(trip.id)?.version == 1)  // a cannot hear of it while cut off
        try await proxy.restore()
        // Either a's reader picks up after its last entry (the stream kept the version) or, having lost the link, it
        // subscribes again after its retry delay on the test's clock (moved on while we look) and reloads from the
        // store. Its socket I/O runs in real time: the wall-time bound only guards against a hang.
        let clock = nodes.clock, service = nodes.a.service
        try await eventually("a caught up", within: .seconds(30)) {
            if try service.cached(trip.id)?.version ?? 0 >= 2 { return true }
            await clock.advance(by: .seconds(1))
            return false
        }
        let resumed = try await nextVersion(&watcher)
        #expect(resumed.version == 2 && resumed.state == .driverAssigned)
        // Nothing is repeated: the next event is the next version.
        let step = #"{"changeId":"step-arrived-1","step":"driverArrived","deviceTime":"2026-10-20T18:40:00Z"}"#
        #expect(
            await nodes.b.call(
                "POST", "/v1/provider/trips/\(trip.id)/steps", token: nodes.b.token("p1", .provider), json: step
            ).status == 200)
        #expect(try await nextVersion(&watcher).version == 3)
    }
}

extension RedisLiveBusTests {
    /// A numbered version as the bus carries it.
    func version(_ sequence: UInt64, of trip: String = "T1") -> BusEnvelope {
        var record = TripRecord(
            id: trip, kind: .ride, status: .ride(.searching), customerId: "c1",
            pickup: Coordinate(lat: 60.17, lng: 24.94), dropoff: Coordinate(lat: 60.18, lng: 24.95),
            createdAt: Date(timeIntervalSince1970: 0))
        record.version = Int(sequence)
        return BusEnvelope(origin: "a", city: Cities.defaultName, message: .trip(record), sequence: sequence)
    }

    /// A relay's retry (a lost answer, a paused holder resuming) publishes numbers Redis holds already: they are
    /// refused and counted, and a reader gets each version once.
    @Test func aVersionPublishedAgainAtItsNumberIsRefusedByRedisAndReadOnce() async throws {
        let configuration = try RedisConfiguration(url: TestRedisServer.url ?? "", commandTimeout: .seconds(2))
        let bus = RedisLiveBus(configuration, prefix: "test-\(UUID().uuidString)", block: .milliseconds(200))
        var reader = bus.subscribe(cities: [Cities.defaultName]).makeAsyncIterator()
        #expect(try await bus.publish([version(1), version(2)]) == 0)
        #expect(try await bus.publish([version(1), version(2), version(3)]) == 2, "1 and 2 are there already")
        #expect(try await bus.publish([version(2)]) == 1)
        try await bus.publish([BusEnvelope(origin: "a", city: Cities.defaultName, message: .relayDue)])
        var read: [UInt64?] = []
        while read.count < 4, let envelope = try await reader.next() { read.append(envelope.sequence) }
        #expect(
            read.compactMap { $0 }.sorted() == [1, 2, 3] && read.contains(nil),
            "each number once, beside the unnumbered message")
    }

    /// Two nodes through Redis: one relays the city, and its versions stream holds each version once at ids 1-0, 2-0,
    /// ….
    @Test func oneNodeRelaysTheCityAndItsVersionsStreamHoldsEachVersionOnceInOrder() async throws {
        let prefix = "test-\(UUID().uuidString)"
        let nodes = try await makeNodes(prefix: prefix)
        defer { nodes.remove() }
        let trip = try await requestRide(on: nodes.b)
        #expect(await nodes.a.assign(trip.id, to: "p1").status == 200)
        let step = #"{"changeId":"step-arrived-1","step":"driverArrived","deviceTime":"2026-10-20T18:40:00Z"}"#
        try await eventually("b holds the assignment", within: .seconds(30)) {
            try nodes.b.service.cached(trip.id)?.version ?? 0 >= 2
        }
        #expect(
            await nodes.b.call(
                "POST", "/v1/provider/trips/\(trip.id)/steps", token: nodes.b.token("p1", .provider), json: step
            ).status == 200)
        let redis = RedisConnection(try RedisConfiguration(url: TestRedisServer.url ?? ""))
        defer { Task { await redis.close() } }
        let clock = nodes.clock, store = nodes.a.backend.store
        var entries: [(id: String, trip: String, version: Int)] = []
        // Redis round trips run in real time: the wall-time bound only guards against a hang.
        try await eventually("the outbox drained onto the versions stream", within: .seconds(30)) {
            guard try await store.dueOutbox(topic: FanOut.topic, now: clock.date, limit: 10).isEmpty else {
                await clock.advance(by: .seconds(1))
                return false
            }
            entries = try await Self.versions(redis, "\(prefix):versions:\(Cities.defaultName)")
            return entries.count >= 3
        }
        #expect(entries.map(\.id) == ["1-0", "2-0", "3-0"])
        #expect(entries.map(\.version) == [1, 2, 3] && Set(entries.map(\.trip)) == [trip.id])
        // Draining moved the clock a second per look, past a lease's length under load: the lease may have changed
        // hands, and a node learns it lost one at its next look. Within a lease's length the nodes agree on one relay.
        try await eventually("one node relays the city", within: .seconds(30)) {
            let relays = [nodes.a, nodes.b].filter { $0.backend.fanOut?.relaying.contains(Cities.defaultName) ?? false }
            if relays.count == 1 { return true }
            await clock.advance(by: .seconds(1))
            return false
        }
    }

    /// The entries of a versions stream (`XRANGE key - +`): id, trip and version.
    static func versions(
        _ redis: RedisConnection, _ key: String
    ) async throws -> [(id: String, trip: String, version: Int)] {
        guard case .array(let replies) = try await redis.send(["XRANGE", key, "-", "+"]) else { return [] }
        return try replies.map { reply in
            // [id, [field, value, …]], the field `e` holding the envelope.
            guard case .array(let parts) = reply, parts.count == 2, let id = parts[0].string,
                case .array(let fields) = parts[1],
                fields.count == 2, let payload = fields[1].bytes
            else { throw RedisBusTestFailure("not an entry: \(reply)") }
            let envelope = try WireCoding.decoder().decode(BusEnvelope.self, from: Data(payload))
            guard case .trip(let trip) = envelope.message else {
                throw RedisBusTestFailure("not a version: \(envelope.message)")
            }
            return (id, trip.id, trip.version)
        }
    }
}

struct RedisBusTestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
