import Foundation
import Testing
import HTTPTransport
import EnRouteModels
import EnRouteDomain
import EnRouteSandbox
import EnRouteBackend
import TestSupport
import Synchronization
import EnRouteRedis
import RedisClient

/// Several nodes on one store and one live bus: what one node commits or ingests reaches the watchers of another, the
/// store's rules hold across nodes, and a lost bus delays the fan-out without losing or repeating a version.
@Suite(.timeLimit(.minutes(1))) struct MultiNodeTests {
    struct Nodes {
        let all: [TestBackend]
        var a: TestBackend { all[0] }
        var b: TestBackend { all[1] }
        let bus: InMemoryLiveBus
        /// Who is online and where, shared by every node.
        let locations: any ProviderLocations
        /// Each node's way onto the bus, in the order of `all`.
        let links: [ControlledBus]
        let clock: ManualClock
        let folder: URL
        func remove() { try? FileManager.default.removeItem(at: folder) }
        func fanOut(_ node: TestBackend) throws -> FanOut { try #require(node.backend.fanOut) }
        /// The nodes relaying the default city now.
        var relays: [TestBackend] { all.filter { $0.backend.fanOut?.relaying.contains(Cities.defaultName) ?? false } }
        func link(of node: TestBackend) -> ControlledBus { links[all.firstIndex { $0.name == node.name } ?? 0] }
    }

    /// `count` started nodes (`a`, `b`, …) over one SQLite file, one in-memory bus (each through a `ControlledBus`),
    /// one clock, one payment sandbox and one set of provider locations: `locations` made on the clock's wall time, or
    /// one
    /// `ProviderPresence` (in one process it stands in for Redis's geo index, as the in-memory bus for its streams).
    func makeNodes(
        _ count: Int = 2, locations: ((@escaping @Sendable () -> Date) throws -> any ProviderLocations)? = nil
    ) async throws -> Nodes {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("enroute-nodes-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let db = folder.appendingPathComponent("db.sqlite").path
        let clock = ManualClock(), bus = InMemoryLiveBus()
        let now: @Sendable () -> Date = { clock.date }
        let shared = try locations?(now) ?? ProviderPresence(now: now)
        let sandbox = SandboxGateway(
            baseURL: BackendEffects.sandboxBaseURL, ids: SequentialIDGenerator(prefix: ""), now: now)
        let links = (0..<count).map { _ in ControlledBus(bus) }
        let all = zip(["a", "b", "c", "d"].prefix(count), links).map { node, link in
            TestBackend(
                clock: clock, storage: .sqlite(path: db), payments: sandbox, node: node, liveBus: link,
                locations: shared)
        }
        for node in all { try await node.backend.start() }
        // What a node shares before the others read the bus is not theirs to see: start once every node reads it.
        try await eventually("every node reads the bus") { bus.subscriberCount == count }
        return Nodes(all: Array(all), bus: bus, locations: shared, links: links, clock: clock, folder: folder)
    }

    /// Every version committed on `nodes` so far, as (trip, version), from the store.
    func committedVersions(_ nodes: Nodes, _ tripIds: [String]) throws -> Set<Relayed> {
        Set(
            try tripIds.flatMap { id in
                (1...(try nodes.a.backend.store.trip(id: id)?.version ?? 0)).map { Relayed(trip: id, version: $0) }
            })
    }

    /// Waits until the shared outbox holds no version and the bus carried every committed one.
    func drained(_ nodes: Nodes, _ recorder: BusRecorder, _ tripIds: [String]) async throws {
        let store = nodes.a.backend.store, clock = nodes.clock
        try await eventually(
            "the outbox drained onto the bus", advancing: clock, by: .seconds(1), steps: 30, yieldsPerStep: 20_000
        ) {
            let left = try await store.dueOutbox(topic: FanOut.topic, now: clock.date, limit: 10).count
            return try left == 0 && Set(recorder.versions.map(\.relayed)) == committedVersions(nodes, tripIds)
        }
    }

    /// A customer's live stream of a ride on `node`, through its router.
    func watch(
        _ node: TestBackend, _ customer: String, _ tripId: String
    ) async -> AsyncThrowingStream<ServerSentEvent, any Error>.Iterator {
        let (http, server) = node.client(customer, .customer)
        let request = await server.request(
            "GET", "/v1/trips/\(tripId)/events", headers: ["Accept": "text/event-stream"])
        return http.events(request).makeAsyncIterator()
    }

    /// The next `tripUpdated` event's trip, skipping fixes.
    func nextVersion(_ events: inout AsyncThrowingStream<ServerSentEvent, any Error>.Iterator) async throws -> Trip {
        while let event = try await events.next() {
            if event.event == LiveEventName.tripUpdated.rawValue {
                return try WireCoding.decoder().decode(Trip.self, from: Data(event.data.utf8))
            }
        }
        throw Failure("the stream ended")
    }

    func upload(_ node: TestBackend, _ provider: String, batch: String, _ fixes: [LocationFix]) async throws -> Int {
        let body = String(
            decoding: try WireCoding.encoder().encode(LocationBatch(batchId: batch, fixes: fixes)), as: UTF8.self)
        return await node.call("POST", APIPath.providerLocations, token: node.token(provider, .provider), json: body)
            .status
    }

    func step(_ node: TestBackend, _ tripId: String, _ step: String, change: String, at: Date) async -> Int {
        let body =
            #"{"changeId":"\#(change)","step":"\#(step)","deviceTime":"\#(ISO8601DateFormatter().string(from: at))"}"#
        return await node.call(
            "POST", "/v1/provider/trips/\(tripId)/steps", token: node.token("p1", .provider), json: body
        ).status
    }

    /// Puts `provider` online on `node` at `metres` north of the standard pickup: every node finds them in the
    /// locations they share.
    func online(_ provider: String, on node: TestBackend, north metres: Double, _ nodes: Nodes) async throws {
        let at = ProviderBackend.north(metres)
        let status = await node.call(
            "POST", "/v1/provider/availability", token: node.token(provider, .provider),
            json: #"{"online":true,"position":{"lat":\#(at.lat),"lng":\#(at.lng)}}"#
        ).status
        #expect(status == 200)
        for other in nodes.all {
            #expect(
                try await other.backend.providers.presence.nearest(
                    to: ProviderBackend.pickup, limit: 50, within: 10_000
                ) { _ in true }
                .contains { $0.id == provider }, "\(provider) is findable on \(other.name)")
        }
    }

    func acceptOffer(_ node: TestBackend, _ provider: String, _ offer: Offer) async -> Int {
        await node.call("POST", "/v1/provider/offers/\(offer.offerId)/accept", token: node.token(provider, .provider))
            .status
    }

    @Test func anOfferMadeOnOneNodeReachesItsProviderOnAnotherAndIsAcceptedThere() async throws {
        let nodes = try await makeNodes()
        defer { nodes.remove() }
        var inbox = ProviderInbox(nodes.b.backend.providers, "p1")
        try await online("p1", on: nodes.b, north: 100, nodes)
        let trip = try await nodes.a.requestRide("c1")  // a commits it, so a runs its search
        let offer = try await inbox.offer()  // and p1's stream on b carries the offer
        #expect(offer.tripId == trip.id)
        #expect(nodes.b.backend.providers.dispatcher.liveOffer(heldBy: "p1") == offer)
        #expect(await acceptOffer(nodes.b, "p1", offer) == 200)
        let a = nodes.a
        // Through b's outbox, the relay and the bus: store round trips, slow on PostgreSQL beside a thousand other
        // tests.
        try await eventually("a holds the assigned trip and its search ended", within: .seconds(30)) {
            try a.service.cached(trip.id)?.providerId == "p1" && a.backend.providers.dispatcher.activeSearches == 0
        }
        #expect(try a.backend.offerStore.offer(id: offer.offerId)?.ending == .accepted)
        #expect(a.backend.offerStore.holders().isEmpty)
    }

    /// Presence in Redis (`enroute serve --redis`): a provider who goes online on a and posts a fix there is found by
    /// the
    /// search b runs, in Redis's geo index, and takes the offer on a.
    @Test(.enabled(if: MultiNodeRedis.url != nil, "needs ENROUTE_TEST_REDIS_URL"))
    func aProviderOnlineOnOneNodeWithAFixIsOfferedARideRequestedOnAnotherThroughRedis() async throws {
        let prefix = "enroute-test-\(UUID().uuidString)"
        let nodes = try await makeNodes { now in
            RedisProviderLocations(
                redis: RedisConnection(
                    try RedisConfiguration(url: MultiNodeRedis.url ?? "", commandTimeout: .seconds(2))),
                prefix: prefix, now: now)
        }
        defer { nodes.remove() }
        #expect(
            nodes.all.allSatisfy {
                $0.backend.providers.presence as? RedisProviderLocations === nodes.locations as? RedisProviderLocations
            })
        var inbox = ProviderInbox(nodes.a.backend.providers, "p1")
        let a = nodes.a
        #expect(
            await a.call(
                "POST", "/v1/provider/availability", token: a.token("p1", .provider), json: #"{"online":true}"#
            ).status == 200)
        let at = ProviderBackend.north(150)
        let fix = LocationFix(lat: at.lat, lng: at.lng, heading: 0, speed: 0, accuracy: 5, recordedAt: nodes.clock.date)
        #expect(try await upload(a, "p1", batch: "batch-0001", [fix]) == 200)
        // The fix is in Redis: b reads it there.
        let seen = try await nodes.b.backend.providers.presence.position(of: "p1")
        #expect(seen.map { abs($0.coordinate.lat - at.lat) < 1e-6 } == true)
        let trip = try await nodes.b.requestRide("c1")  // b commits it, so b runs its search
        let offer = try await inbox.offer()  // found in Redis; p1's stream on a carries the offer
        #expect(offer.tripId == trip.id)
        #expect(await acceptOffer(a, "p1", offer) == 200)
        let b = nodes.b
        try await eventually("b holds the assigned trip and its search ended", within: .seconds(30)) {
            try b.service.cached(trip.id)?.providerId == "p1" && b.backend.providers.dispatcher.activeSearches == 0
        }
    }

    /// A search waiting for supply on one node wakes when a provider becomes findable on another: the `supplyChanged`
    /// word on the bus, without the clock moving (the provider is found in the locations the nodes share).
    @Test func aSearchWaitingOnOneNodeWakesWhenAProviderBecomesFindableOnAnother() async throws {
        let nodes = try await makeNodes()
        defer { nodes.remove() }
        var inbox = ProviderInbox(nodes.a.backend.providers, "p1")
        let trip = try await nodes.b.requestRide("c1")
        let b = nodes.b.backend.providers.dispatcher
        // b has looked and found nobody: only the word from a can make it look again (its clock does not move).
        try await eventually("b's search found nobody and waits for supply") { b.searchesFindingNobody == 1 }
        try await online("p1", on: nodes.a, north: 100, nodes)
        #expect(try await inbox.offer().tripId == trip.id)
    }

    @Test func aDeclineOnAnotherNodeMovesTheSearchOnAtOnce() async throws {
        let nodes = try await makeNodes()
        defer { nodes.remove() }
        var p1 = ProviderInbox(nodes.b.backend.providers, "p1"), p2 = ProviderInbox(nodes.a.backend.providers, "p2")
        try await online("p1", on: nodes.b, north: 100, nodes)
        try await online("p2", on: nodes.a, north: 200, nodes)
        let trip = try await nodes.a.requestRide("c1")
        let first = try await p1.offer()
        let declined = await nodes.b.call(
            "POST", "/v1/provider/offers/\(first.offerId)/decline", token: nodes.b.token("p1", .provider))
        #expect(declined.status == 204)
        let second = try await p2.offer()  // no clock advance: b's word that the offer ended moved a's search on
        #expect(second.tripId == trip.id && second.offerId != first.offerId)
        #expect(await acceptOffer(nodes.a, "p2", second) == 200)
        #expect(await acceptOffer(nodes.b, "p1", first) == 409)
    }

    @Test func oneHundredAcceptsSpreadAcrossThreeNodesLeaveOneHolder() async throws {
        let nodes = try await makeNodes(3)
        defer { nodes.remove() }
        var inbox = ProviderInbox(nodes.all[2].backend.providers, "p1")
        try await online("p1", on: nodes.all[2], north: 100, nodes)
        for rival in 2...5 {
            try await online("p\(rival)", on: nodes.all[rival % 3], north: 2_000 + Double(rival) * 100, nodes)
        }
        let trip = try await nodes.a.requestRide("c1")
        let offer = try await inbox.offer()
        // The holder's accept, sent 100 times across the nodes at once, and rivals' direct accepts of the trip among
        // them.
        let answers = await withTaskGroup(of: (String, Int).self) { group in
            for i in 0..<100 {
                let node = nodes.all[i % 3]
                if i % 10 == 9 {
                    let rival = "p\(2 + i % 4)"
                    group.addTask {
                        (
                            rival,
                            await node.call(
                                "POST", "/v1/provider/trips/\(trip.id)/accept", token: node.token(rival, .provider)
                            ).status
                        )
                    }
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
        // Each step leaves b's heartbeat the turns to finish its store reads (slow on PostgreSQL beside a thousand
        // tests).
        try await eventually(
            "b took the search over", advancing: nodes.clock, by: .seconds(1), steps: 5, yieldsPerStep: 200_000
        ) { b.activeSearches == 1 }
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
        for n in 0..<200 {
            fanOut.share(.providerEvent(provider: "p1", name: "n", data: Array("\(n)".utf8)), city: Cities.defaultName)
        }
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
        let fix = LocationFix(
            lat: 60.1705, lng: 24.9384, heading: 180, speed: 6, accuracy: 5, recordedAt: nodes.clock.date)
        #expect(try await upload(nodes.b, "p1", batch: "batch-0001", [fix]) == 200)
        var moved: ServerSentEvent?
        while let event = try await watcher.next() {
            if event.event == LiveEventName.driverMoved.rawValue { moved = event; break }
        }
        let location = try WireCoding.decoder().decode(DriverLocation.self, from: Data(try #require(moved).data.utf8))
        #expect(abs(location.coordinate.lat - fix.lat) < 1e-9 && abs(location.coordinate.lng - fix.lng) < 1e-9)
        // The next change, committed on b, carries the fix a already holds, and a's tracking read agrees.
        #expect(await step(nodes.b, trip.id, "driverArrived", change: "step-arrived-1", at: nodes.clock.date) == 200)
        let arrived = try await nextVersion(&watcher)
        #expect(arrived.version == 3 && arrived.state == .driverArrived)
        #expect(try nodes.a.service.cached(trip.id)?.version == 3)
        #expect(nodes.a.backend.fanOut?.counters.applied ?? 0 >= 3)
    }

    /// A provider's stream on one node ends when they give the ride up on another: the version that leaves them out
    /// reaches that node over the bus and ends the stream before anything after it.
    @Test func aProviderWhoGivesARideUpOnOneNodeLosesTheStreamHeldOnAnother() async throws {
        let nodes = try await makeNodes()
        defer { nodes.remove() }
        let trip = try await nodes.b.requestRide("c1")
        #expect(await nodes.b.assign(trip.id, to: "p1").status == 200)
        try await eventually("a has the assignment") { try nodes.a.service.cached(trip.id)?.version == 2 }
        let (http, server) = nodes.a.client("p1", .provider)
        let path = "/v1/trips/\(trip.id)/events"
        let request = await server.request("GET", path, headers: ["Accept": "text/event-stream"])
        var watcher = http.events(request).makeAsyncIterator()
        #expect(try await nextVersion(&watcher).version == 2)
        #expect(await step(nodes.b, trip.id, "cancelled", change: "give-up-1", at: nodes.clock.date) == 200)
        let last = try await watcher.next()
        try #require(last?.event == LiveEventName.accessEnded.rawValue, "got \(last?.event ?? "the end")")
        #expect(try await watcher.next() == nil, "the stream ends after it")
    }

    /// The chat socket of a provider who gives the ride up on another node ends too.
    @Test func aProviderWhoGivesARideUpOnOneNodeLosesTheChatSocketHeldOnAnother() async throws {
        let nodes = try await makeNodes()
        defer { nodes.remove() }
        let trip = try await nodes.b.requestRide("c1")
        #expect(await nodes.b.assign(trip.id, to: "p1").status == 200)
        try await eventually("a has the assignment") { try nodes.a.service.cached(trip.id)?.version == 2 }
        let socket = nodes.a.backend.chat.listen(trip.id, role: .provider)
        #expect(nodes.a.backend.chat.listenerCount(trip.id) == 1)
        #expect(await step(nodes.b, trip.id, "cancelled", change: "give-up-1", at: nodes.clock.date) == 200)
        let chat = nodes.a.backend.chat
        try await eventually("the former provider's chat socket ends") { chat.listenerCount(trip.id) == 0 }
        _ = socket
    }

    @Test func oneIdempotencyKeySentToBothNodesAtOnceCreatesOneTrip() async throws {
        let nodes = try await makeNodes()
        defer { nodes.remove() }
        let body = try await nodes.a.rideBody("c1")
        let token = nodes.a.token("c1", .customer)
        async let first = nodes.a.call(
            "POST", APIPath.trips, token: token, json: body, headers: ["Idempotency-Key": "one-key-two-nodes"])
        async let second = nodes.b.call(
            "POST", APIPath.trips, token: token, json: body, headers: ["Idempotency-Key": "one-key-two-nodes"])
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
        async let first = nodes.a.call(
            "POST", APIPath.trips, token: token, json: bodyA, headers: ["Idempotency-Key": "ride-on-node-a"])
        async let second = nodes.b.call(
            "POST", APIPath.trips, token: token, json: bodyB, headers: ["Idempotency-Key": "ride-on-node-b"])
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
        #expect(resumed.version == 3 && resumed.state == .driverArrived)  // the newest; versions only rise
        // The relayed copies of versions 2 and 3 arrive after the resync and change nothing: the next event is the next
        // version.
        #expect(await step(nodes.b, trip.id, "onTrip", change: "step-started-1", at: nodes.clock.date) == 200)
        #expect(try await nextVersion(&watcher).version == 4)
    }

    // MARK: - The relay under one lease per city

    /// Commits versions of two trips on every node of three: one node relays the city, and the bus carries each
    /// version once, numbered 1, 2, 3… in order; every node applies each version made elsewhere once.
    @Test func oneNodeOfThreeRelaysACityAndTheBusCarriesEachVersionOnceInOrder() async throws {
        let nodes = try await makeNodes(3)
        defer { nodes.remove() }
        let recorder = BusRecorder(nodes.bus)
        let applied = try nodes.all.map { node in AppliedVersions(try nodes.fanOut(node)) }
        let first = try await nodes.b.requestRide("c1")
        #expect(await nodes.all[2].assign(first.id, to: "p1").status == 200)
        let a = nodes.a
        try await eventually("a holds the assignment made on c") { try a.service.cached(first.id)?.version == 2 }
        #expect(await step(nodes.a, first.id, "driverArrived", change: "step-arrived-1", at: nodes.clock.date) == 200)
        let second = try await nodes.all[2].requestRide("c2")
        #expect(await nodes.a.assign(second.id, to: "p2").status == 200)
        try await drained(nodes, recorder, [first.id, second.id])
        #expect(nodes.relays.count == 1, "one relay for the city")
        let carried = recorder.versions
        #expect(carried.map(\.sequence) == Array(1...UInt64(carried.count)), "numbered in order, none twice")
        #expect(Set(carried.map(\.relayed)).count == carried.count)
        // A relay counts what it published once the outbox has let go of it: the count may follow the drain.
        try await eventually("every version carried was counted as relayed") {
            try nodes.all.map { try nodes.fanOut($0).counters.relayed }.reduce(0, +) == carried.count
        }
        #expect(try nodes.all.map { try nodes.fanOut($0).counters }.allSatisfy { $0.duplicates == 0 })
        for (node, seen) in zip(nodes.all, applied) {
            let madeElsewhere = carried.filter { $0.origin != node.backend.configuration.node }.map(\.relayed)
            try await eventually("\(node.backend.configuration.node) applied every version made elsewhere") {
                seen.versions.count >= madeElsewhere.count
            }
            #expect(seen.versions.sorted() == madeElsewhere.sorted(), "each applied once")
        }
    }

    /// The relay dies between the bus taking its versions and removing them from the outbox (here: the bus's answer is
    /// lost): the next pass publishes them again, the bus refuses them as already published, and they leave the outbox.
    @Test func aRelayRetryAfterALostAnswerIsRefusedAsADuplicateAndTheVersionsComplete() async throws {
        let nodes = try await makeNodes(2)
        defer { nodes.remove() }
        let recorder = BusRecorder(nodes.bus)
        try await eventually("a node relays the city") { nodes.relays.count == 1 }
        let holder = try #require(nodes.relays.first)
        nodes.link(of: holder).loseAnswers(1)
        let trip = try await nodes.b.requestRide("c1")
        #expect(await nodes.a.assign(trip.id, to: "p1").status == 200)
        try await drained(nodes, recorder, [trip.id])
        // The holder heard a failure and left the city to the other node, whose publish the bus refused.
        // The refused publish is counted once the outbox has let go of it: the count may follow the drain.
        try await eventually("the other node's publish was refused as a duplicate") {
            try nodes.all.map { try nodes.fanOut($0).counters.duplicates }.reduce(0, +) >= 1
        }
        #expect(try nodes.fanOut(holder).counters.publishFailures == 1)
        #expect(
            recorder.versions.map(\.relayed) == [
                Relayed(trip: trip.id, version: 1), Relayed(trip: trip.id, version: 2),
            ], "each once")
    }

    /// A holder that reaches the store but not the bus gives the city up, and a node that reaches the bus relays it.
    @Test func aRelayCutOffFromTheBusLeavesTheCityToANodeThatReachesIt() async throws {
        let nodes = try await makeNodes(2)
        defer { nodes.remove() }
        let recorder = BusRecorder(nodes.bus)
        try await eventually("a node relays the city") { nodes.relays.count == 1 }
        let holder = try #require(nodes.relays.first), other = try #require(nodes.all.first { $0.name != holder.name })
        nodes.link(of: holder).cut()
        let trip = try await holder.requestRide("c1")
        #expect(await holder.assign(trip.id, to: "p1").status == 200)
        try await drained(nodes, recorder, [trip.id])
        #expect(nodes.relays.map(\.name) == [other.name])
        #expect(try nodes.fanOut(holder).counters.publishFailures >= 1 && nodes.fanOut(holder).counters.relayed == 0)
        #expect(recorder.versions.map(\.sequence) == [1, 2])
    }

    /// The holder stops: it hands the lease over, another node takes it on its next look, and the numbers go on.
    @Test func aStoppedRelaysLeaseIsTakenByAnotherNodeAndTheNumbersGoOn() async throws {
        let nodes = try await makeNodes(3)
        defer { nodes.remove() }
        let recorder = BusRecorder(nodes.bus)
        try await eventually("a node relays the city") { nodes.relays.count == 1 }
        let holder = try #require(nodes.relays.first)
        let others = nodes.all.filter { $0.name != holder.name }
        let trip = try await others[0].requestRide("c1")
        try await drained(nodes, recorder, [trip.id])
        await holder.backend.stop()
        #expect(await others[1].assign(trip.id, to: "p1").status == 200)
        try await drained(nodes, recorder, [trip.id])
        #expect(nodes.relays.count == 1 && nodes.relays.first?.name != holder.name)
        #expect(recorder.versions.map(\.sequence) == [1, 2])
    }

    /// The holder is paused (its publish hangs) past its lease: another node takes the lease within a few looks and
    /// publishes what the holder had stamped; resumed, the holder's publish is refused as already made, and it relays
    /// nothing more.
    @Test func aPausedRelayWhoseLeaseWasTakenPublishesNothingAfterResuming() async throws {
        let nodes = try await makeNodes(3)
        defer { nodes.remove() }
        let recorder = BusRecorder(nodes.bus)
        try await eventually("a node relays the city") { nodes.relays.count == 1 }
        let holder = try #require(nodes.relays.first), link = nodes.link(of: holder)
        let others = nodes.all.filter { $0.name != holder.name }
        link.pause()
        let trip = try await others[0].requestRide("c1")
        #expect(await others[1].assign(trip.id, to: "p1").status == 200)
        try await eventually("the holder stamped and is stuck publishing") { link.waiting == 1 }
        // The lease (10 s) runs out on the shared clock; one of the others takes it at its next look (every second).
        let pausedAt = nodes.clock.date
        try await eventually(
            "another node took the lease", advancing: nodes.clock, by: .seconds(1), steps: 15, yieldsPerStep: 20_000
        ) {
            nodes.relays.contains { $0.name != holder.name }
        }
        #expect(nodes.clock.date.timeIntervalSince(pausedAt) <= 12, "taken within a look or two of the lease's end")
        try await drained(nodes, recorder, [trip.id])
        let before = try nodes.fanOut(holder).counters
        link.resume()
        try await eventually("the resumed holder's publish was refused") {
            try nodes.fanOut(holder).counters.duplicates >= 1
        }
        try await eventually("it learned it lost the lease", advancing: nodes.clock, by: .seconds(1), steps: 5) {
            !(try nodes.fanOut(holder).relaying.contains(Cities.defaultName))
        }
        #expect(await step(others[1], trip.id, "driverArrived", change: "step-arrived-1", at: nodes.clock.date) == 200)
        try await drained(nodes, recorder, [trip.id])
        #expect(
            try nodes.fanOut(holder).counters.relayed == before.relayed, "the resumed holder put nothing on the bus")
        #expect(recorder.versions.map(\.sequence) == [1, 2, 3] && Set(recorder.versions.map(\.relayed)).count == 3)
    }

    /// Rides requested and assigned on three nodes at once while the relay's holder stops halfway: the recorded bus
    /// carries every committed version once, numbered 1…n without a gap, and the nodes still running applied each
    /// version made elsewhere once.
    @Test func versionsCommittedOnThreeNodesAcrossAHandoverArePublishedOnceAndAppliedOnce() async throws {
        let nodes = try await makeNodes(3)
        defer { nodes.remove() }
        let recorder = BusRecorder(nodes.bus)
        let applied = try nodes.all.map { AppliedVersions(try nodes.fanOut($0)) }
        try await eventually("a node relays the city") { nodes.relays.count == 1 }
        let holder = try #require(nodes.relays.first)
        func burst(_ customers: ClosedRange<Int>, on nodes: [TestBackend]) async throws -> [String] {
            try await withThrowingTaskGroup(of: String.self) { group in
                for n in customers {
                    let node = nodes[n % nodes.count]
                    group.addTask {
                        let trip = try await node.requestRide("c\(n)")
                        #expect(await node.assign(trip.id, to: "p\(n)").status == 200)
                        return trip.id
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
        }
        var trips = try await burst(1...6, on: nodes.all)
        await holder.backend.stop()
        let running = nodes.all.filter { $0.name != holder.name }
        trips += try await burst(7...12, on: running)
        try await drained(nodes, recorder, trips)
        let carried = recorder.versions
        #expect(carried.count == 24)
        #expect(
            carried.map(\.sequence) == Array(1...UInt64(carried.count)), "numbered 1…n once each, across the handover")
        #expect(Set(carried.map(\.relayed)).count == carried.count, "each version once")
        for (node, seen) in zip(nodes.all, applied) where node.name != holder.name {
            let madeElsewhere = carried.filter { $0.origin != node.name }.map(\.relayed)
            try await eventually("\(node.name) applied every version made elsewhere") {
                seen.versions.count >= madeElsewhere.count
            }
            #expect(seen.versions.sorted() == madeElsewhere.sorted(), "each applied once")
        }
    }

    /// Of three nodes, the one holding the reconciler lease reconciles payments; once it stops, its lease runs out and
    /// another node takes the passes over.
    @Test func oneNodeOfThreeReconcilesPaymentsAndAnotherTakesOverOnceItStops() async throws {
        let nodes = try await makeNodes(3)
        defer { nodes.remove() }
        let workers = nodes.all.map(\.backend.paymentWorker)
        try await eventually("a node made the first pass") { workers.contains { $0.reconcilerPasses > 0 } }
        // A second at a time, as the workers poll: each node looks every `reconcileEvery` (60 s).
        try await eventually("the next pass", advancing: nodes.clock, by: .seconds(1), steps: 180) {
            workers.map(\.reconcilerPasses).reduce(0, +) >= 2
        }
        let holder = try #require(
            workers.firstIndex { $0.reconcilerPasses >= 2 },
            "the same node both times: \(workers.map(\.reconcilerPasses))")
        #expect(workers.map(\.reconcilerPasses).filter { $0 > 0 }.count == 1)
        await nodes.all[holder].backend.stop()
        // The lease lasts 2.5 passes (150 s) from its last renewal; the others look every 60 s.
        try await eventually("another node took the lease over", advancing: nodes.clock, by: .seconds(1), steps: 400) {
            workers.indices.contains { $0 != holder && workers[$0].reconcilerPasses > 0 }
        }
        #expect(
            workers.indices.filter { $0 != holder && workers[$0].reconcilerPasses > 0 }.count == 1,
            "one of the two left")
    }

    /// A jump in a city's numbers (an entry lost on the bus) makes every reader reload from the store.
    @Test func aGapInACitysNumbersMakesTheReadersResynchronise() async throws {
        let nodes = try await makeNodes(2)
        defer { nodes.remove() }
        let recorder = BusRecorder(nodes.bus)
        let trip = try await nodes.a.requestRide("c1")
        try await drained(nodes, recorder, [trip.id])
        try await nodes.bus.publish([
            BusEnvelope(origin: "elsewhere", city: Cities.defaultName, message: .relayDue, sequence: 3)
        ])
        let a = try nodes.fanOut(nodes.a), b = try nodes.fanOut(nodes.b)
        try await eventually("both readers resynchronised") { a.counters.resyncs == 1 && b.counters.resyncs == 1 }
    }
}

/// The Redis the multi-node tests with presence in Redis use: `ENROUTE_TEST_REDIS_URL` (`make test` starts one).
enum MultiNodeRedis {
    static let url = ProcessInfo.processInfo.environment["ENROUTE_TEST_REDIS_URL"].flatMap { $0.isEmpty ? nil : $0 }
}

extension TestBackend {
    /// The node's id among several.
    var name: String { backend.configuration.node }
}

/// A trip version as the relay carries it.
struct Relayed: Hashable, Comparable, CustomStringConvertible {
    let trip: String
    let version: Int
    static func < (l: Relayed, r: Relayed) -> Bool { (l.trip, l.version) < (r.trip, r.version) }
    var description: String { "\(trip)@\(version)" }
}

/// Every numbered version published on a bus's default city stream from its creation on, in the order published.
final class BusRecorder: Sendable {
    struct Entry: Sendable { let sequence: UInt64; let origin: String; let relayed: Relayed }
    private let entries = Mutex<[Entry]>([])
    private let task = Mutex<Task<Void, Never>?>(nil)

    init(_ bus: InMemoryLiveBus) {
        let stream = bus.subscribe(cities: [Cities.defaultName])
        task.withLock {
            $0 = Task { [weak self] in
                do {
                    for try await envelope in stream {
                        guard let sequence = envelope.sequence, case .trip(let trip) = envelope.message else {
                            continue
                        }
                        self?.entries.withLock {
                            $0.append(
                                Entry(
                                    sequence: sequence, origin: envelope.origin,
                                    relayed: Relayed(trip: trip.id, version: trip.version)))
                        }
                    }
                } catch {}
            }
        }
    }

    var versions: [Entry] { entries.withLock { $0 } }
    deinit { task.withLock { $0?.cancel() } }
}

/// The versions a node applied from the bus, as its listeners hear them.
final class AppliedVersions: Sendable {
    private let seen = Mutex<[Relayed]>([])
    init(_ fanOut: FanOut) {
        fanOut.onMessage { [weak self] message in
            if case .trip(let trip) = message {
                self?.seen.withLock { $0.append(Relayed(trip: trip.id, version: trip.version)) }
            }
        }
    }
    var versions: [Relayed] { seen.withLock { $0 } }
}

/// A node's way onto a shared in-memory bus that a test can pause (numbered publishes wait until resumed, as a
/// stopped process's would) or make lose the bus's answer (the bus takes the versions, the relay hears a failure).
final class ControlledBus: LiveBus {
    private struct State {
        var paused = false
        var waiters: [CheckedContinuation<Void, Never>] = []
        var answersToLose = 0
        var cut = false
    }
    let base: InMemoryLiveBus
    private let state = Mutex(State())

    init(_ base: InMemoryLiveBus) { self.base = base }

    func pause() { state.withLock { $0.paused = true } }
    func resume() {
        let waiters = state.withLock { s in
            defer { s.paused = false; s.waiters = [] }; return s.waiters
        }
        for waiter in waiters { waiter.resume() }
    }
    /// How many numbered publishes wait for `resume()`.
    var waiting: Int { state.withLock { $0.waiters.count } }
    func loseAnswers(_ count: Int) { state.withLock { $0.answersToLose = count } }
    /// Numbered publishes fail from now on, as from a node cut off from the bus.
    func cut() { state.withLock { $0.cut = true } }

    @discardableResult
    func publish(_ envelopes: [BusEnvelope]) async throws -> Int {
        guard envelopes.contains(where: { $0.sequence != nil }) else { return try await base.publish(envelopes) }
        if state.withLock({ $0.cut }) { throw LiveBusUnavailable("cut off") }
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            let wait = state.withLock { s in
                if s.paused { s.waiters.append(waiter) }
                return s.paused
            }
            if !wait { waiter.resume() }
        }
        let refused = try await base.publish(envelopes)
        let lose = state.withLock { s in
            guard s.answersToLose > 0 else { return false }
            s.answersToLose -= 1
            return true
        }
        if lose { throw LiveBusUnavailable("the answer was lost") }
        return refused
    }

    func subscribe(cities: [String]) -> AsyncThrowingStream<BusEnvelope, any Error> { base.subscribe(cities: cities) }
}
