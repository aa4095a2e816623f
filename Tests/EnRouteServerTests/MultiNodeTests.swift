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
        let all: [TestBackend]
        var a: TestBackend { all[0] }
        var b: TestBackend { all[1] }
        let bus: InMemoryLiveBus
        let clock: ManualClock
        let folder: URL
        func remove() { try? FileManager.default.removeItem(at: folder) }
    }

    /// `count` started nodes (`a`, `b`, …) over one SQLite file, one in-memory bus, one clock and one payment sandbox.
    func makeNodes(_ count: Int = 2) async throws -> Nodes {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("enroute-nodes-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let db = folder.appendingPathComponent("db.sqlite").path
        let clock = ManualClock(), bus = InMemoryLiveBus()
        let sandbox = SandboxGateway(baseURL: BackendEffects.sandboxBaseURL, ids: SequentialIDGenerator(prefix: ""), now: { clock.date })
        let all = ["a", "b", "c", "d"].prefix(count).map {
            TestBackend(clock: clock, storage: .sqlite(path: db), payments: sandbox, node: $0, liveBus: bus)
        }
        for node in all { try await node.backend.start() }
        // What a node shares before the others read the bus is not theirs to see: start once every node reads it.
        try await eventually("every node reads the bus") { bus.subscriberCount == count }
        return Nodes(all: Array(all), bus: bus, clock: clock, folder: folder)
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

    /// Puts `provider` online on `node` at `metres` north of the standard pickup, and waits until every other node can find them.
    func online(_ provider: String, on node: TestBackend, north metres: Double, _ nodes: Nodes) async throws {
        let at = ProviderBackend.north(metres)
        let status = await node.call("POST", "/v1/provider/availability", token: node.token(provider, .provider),
                                     json: #"{"online":true,"position":{"lat":\#(at.lat),"lng":\#(at.lng)}}"#).status
        #expect(status == 200)
        for other in nodes.all where other.backend.configuration.node != node.backend.configuration.node {
            let presence = other.backend.providers.presence
            try await eventually("\(provider) is findable on every node", within: .seconds(30)) { presence.position(of: provider) != nil && presence.isOnline(provider) }
        }
    }

    func acceptOffer(_ node: TestBackend, _ provider: String, _ offer: Offer) async -> Int {
        await node.call("POST", "/v1/provider/offers/\(offer.offerId)/accept", token: node.token(provider, .provider)).status
    }

    @Test func anOfferMadeOnOneNodeReachesItsProviderOnAnotherAndIsAcceptedThere() async throws {
        let nodes = try await makeNodes()
        defer { nodes.remove() }
        var inbox = ProviderInbox(nodes.b.backend.providers, "p1")
        try await online("p1", on: nodes.b, north: 100, nodes)
        let trip = try await nodes.a.requestRide("c1")   // a commits it, so a runs its search
        let offer = try await inbox.offer()             // and p1's stream on b carries the offer
        #expect(offer.tripId == trip.id)
        #expect(nodes.b.backend.providers.dispatcher.liveOffer(heldBy: "p1") == offer)
        #expect(await acceptOffer(nodes.b, "p1", offer) == 200)
        let a = nodes.a
        // Through b's outbox, the relay and the bus: store round trips, slow on PostgreSQL beside a thousand other tests.
        try await eventually("a holds the assigned trip and its search ended", within: .seconds(30)) {
            try a.service.cached(trip.id)?.providerId == "p1" && a.backend.providers.dispatcher.activeSearches == 0
        }
        #expect(try a.backend.offerStore.offer(id: offer.offerId)?.ending == .accepted)
        #expect(a.backend.offerStore.holders().isEmpty)
    }

    @Test func aDeclineOnAnotherNodeMovesTheSearchOnAtOnce() async throws {
        let nodes = try await makeNodes()
        defer { nodes.remove() }
        var p1 = ProviderInbox(nodes.b.backend.providers, "p1"), p2 = ProviderInbox(nodes.a.backend.providers, "p2")
        try await online("p1", on: nodes.b, north: 100, nodes)
        try await online("p2", on: nodes.a, north: 200, nodes)
        let trip = try await nodes.a.requestRide("c1")
        let first = try await p1.offer()
        let declined = await nodes.b.call("POST", "/v1/provider/offers/\(first.offerId)/decline", token: nodes.b.token("p1", .provider))
        #expect(declined.status == 204)
        let second = try await p2.offer()   // no clock advance: b's word that the offer ended moved a's search on
        #expect(second.tripId == trip.id && second.offerId != first.offerId)
        #expect(await acceptOffer(nodes.a, "p2", second) == 200)
        #expect(await acceptOffer(nodes.b, "p1", first) == 409)
    }

    @Test func oneHundredAcceptsSpreadAcrossThreeNodesLeaveOneHolder() async throws {
        let nodes = try await makeNodes(3)
        defer { nodes.remove() }
        var inbox = ProviderInbox(nodes.all[2].backend.providers, "p1")
        try await online("p1", on: nodes.all[2], north: 100, nodes)
        for rival in 2...5 { try await online("p\(rival)", on: nodes.all[rival % 3], north: 2_000 + Double(rival) * 100, nodes) }
        let trip = try await nodes.a.requestRide("c1")
        let offer = try await inbox.offer()
        // The holder's accept, sent 100 times across the nodes at once, and rivals' direct accepts of the trip among them.
        let answers = await withTaskGroup(of: (String, Int).self) { group in
            for i in 0..<100 {
                let node = nodes.all[i % 3]
                if i % 10 == 9 {
                    let rival = "p\(2 + i % 4)"
                    group.addTask { (rival, await node.call("POST", "/v1/provider/trips/\(trip.id)/accept", token: node.token(rival, .provider)).status) }
                } else {
                    group.addTask { ("p1", await self.acceptOffer(node, "p1", offer)) }
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        let holder = answers.filter { $0.0 == "p1" }.map(\.1), rivals = answers.filter { $0.0 != "p1" }.map(\.1)
        // Won, or the retried accept of the accepted offer answered as the first; 409 while another copy was accepting.
        #expect(holder.contains(200) && holder.allSatisfy { $0 == 200 || $0 == 409 })
        #expect(rivals.allSatisfy { $0 == 404 || $0 == 409 }, "a rival without the offer takes nothing: \(rivals)")
        let log = try nodes.a.backend.store.changes(tripId: trip.id)
        #expect(log.filter { $0.status == "driverAssigned" }.count == 1)
        #expect(try nodes.a.backend.store.trip(id: trip.id)?.providerId == "p1")
        #expect(try nodes.b.backend.offerStore.offer(id: offer.offerId)?.ending == .accepted)
    }

    @Test func aStoppedNodesSearchIsTakenOverWithItsOfferStillOut() async throws {
        let nodes = try await makeNodes()
        defer { nodes.remove() }
        var p1 = ProviderInbox(nodes.b.backend.providers, "p1"), p2 = ProviderInbox(nodes.b.backend.providers, "p2")
        try await online("p1", on: nodes.b, north: 100, nodes)
        try await online("p2", on: nodes.b, north: 200, nodes)
        let trip = try await nodes.a.requestRide("c1")
        let first = try await p1.offer()
        await nodes.a.backend.stop()
        // b's next look (every takeoverInterval) takes the search over and adopts a's offer, which p1 can still accept
        // until it runs out; then b offers the next candidate.
        let b = nodes.b.backend.providers.dispatcher
        // Each step leaves b's heartbeat the turns to finish its store reads (slow on PostgreSQL beside a thousand tests).
        try await eventually("b took the search over", advancing: nodes.clock, by: .seconds(1), steps: 5, yieldsPerStep: 200_000) { b.activeSearches == 1 }
        #expect(b.liveOffer(forTrip: trip.id) == first)
        try await eventually("a's offer ran out", advancing: nodes.clock, by: .seconds(1), steps: 20) {
            b.liveOffer(forTrip: trip.id).map { $0 != first } ?? false
        }
        let second = try await p2.offer()
        #expect(second.tripId == trip.id)
        #expect(try await p1.next(LiveEventName.offerWithdrawn.rawValue).data.isEmpty == false)
        #expect(await acceptOffer(nodes.b, "p2", second) == 200)
    }

    @Test func messagesOneNodeSharesReachTheOthersInTheOrderTheyWereShared() async throws {
        let nodes = try await makeNodes()
        defer { nodes.remove() }
        var inbox = ProviderInbox(nodes.b.backend.providers, "p1")
        let fanOut = try #require(nodes.a.backend.fanOut)
        for n in 0..<200 { fanOut.share(.providerEvent(provider: "p1", name: "n", data: Array("\(n)".utf8)), city: Cities.defaultName) }
        var received: [String] = []
        for _ in 0..<200 { received.append(String(decoding: try await inbox.next("n").data, as: UTF8.self)) }
        #expect(received == (0..<200).map(String.init))
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
