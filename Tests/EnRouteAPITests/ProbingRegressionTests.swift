import Foundation
import Testing
import HTTPTransport
import EnRouteModels
import EnRouteDomain
import EnRouteAPI
import EnRouteSQLite
import TestSupport
import EnRouteBackend

/// Defects found by outside probing, each reproduced as it was found, on the SQLite store that `enroute serve` runs on.
@Suite struct ProbingRegressionTests {
    /// A fresh database file in its own folder, removed by the caller's `defer`.
    static func database() throws -> (path: String, folder: URL) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "enroute-probing-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return (folder.appendingPathComponent("enroute.sqlite").path, folder)
    }

    // MARK: - Defect 1: one active ride per customer

    @Test(arguments: ["sqlite", "memory"])
    func fiftyConcurrentRideRequestsFromOneCustomerCreateExactlyOneRide(storeKind: String) async throws {
        let db = try Self.database()
        defer { try? FileManager.default.removeItem(at: db.folder) }
        let backend = TestBackend(storage: storeKind == "sqlite" ? .sqlite(path: db.path) : .memory)
        let token = backend.token("c1", .customer)
        // Fifty taps, each with its own quote, so that only the one-active-ride rule can refuse them.
        var bodies: [String] = []
        for _ in 0..<50 { bodies.append(try await backend.rideBody("c1")) }
        let statuses = await withTaskGroup(of: Int.self) { group in
            for (i, body) in bodies.enumerated() {
                group.addTask {
                    await backend.call(
                        "POST", "/v1/trips", token: token, json: body, headers: ["Idempotency-Key": "burst-key-\(i)"]
                    ).status
                }
            }
            var out: [Int] = []
            for await status in group { out.append(status) }
            return out
        }
        #expect(statuses.filter { $0 == 201 }.count == 1)
        #expect(statuses.filter { $0 == 409 }.count == 49)
        let active = try backend.store.activeTrips().filter { $0.customerId == "c1" && $0.kind == .ride }
        #expect(active.count == 1)
        // The refusals name the one active ride.
        let again = await backend.call(
            "POST", "/v1/trips", token: token, json: try await backend.rideBody("c1"),
            headers: ["Idempotency-Key": "burst-key-late"])
        #expect(again.status == 409)
        #expect(
            try WireCoding.decoder().decode(ConflictProblem<Trip>.self, from: Data(again.body)).trip.id
                == active.first?.id)
        // Orders are not limited by the ride rule.
        _ = try await backend.placeOrder("c1")
        _ = try await backend.placeOrder("c1")
    }

    // MARK: - Defect 2: a state that both machines have decodes into the trip's own

    /// Every state of both machines, as a record that reached it.
    static func everyState() -> [TripRecord] {
        let at = Date(timeIntervalSince1970: 1_792_520_000)
        let pickup = Coordinate(lat: 60.1699, lng: 24.9384), dropoff = Coordinate(lat: 60.1841, lng: 24.9497)
        var records: [TripRecord] = []
        for state in TripState.allCases {
            // One customer per ride: a customer has one unfinished ride at a time (PostgreSQL's index refuses a
            // second).
            var trip = TripRecord(
                id: "ride-\(state.rawValue)", kind: .ride, status: .ride(state), customerId: "c-\(state.rawValue)",
                pickup: pickup,
                dropoff: dropoff, createdAt: at)
            trip.productID = "economy"
            if state == .cancelled { trip.cancellation = Cancellation(by: .customer, reason: "changed my mind") }
            if state != .searching && state != .noDriversFound && state != .cancelled { trip.providerId = "p1" }
            records.append(trip)
        }
        for state in DeliveryStatus.allCases {
            var trip = TripRecord(
                id: "order-\(state.rawValue)", kind: .delivery, status: .delivery(state), customerId: "c1",
                pickup: pickup, dropoff: dropoff,
                createdAt: at)
            trip.merchantId = "m1"
            trip.items = [OrderItem(sku: "coffee", quantity: 1)]
            trip.merchantStep = state == .placed ? .pending : .ready
            if state == .cancelled { trip.cancellation = Cancellation(by: .customer, reason: "Cancelled by you") }
            records.append(trip)
        }
        return records
    }

    @Test func everyStateOfBothMachinesSurvivesStoreRestartAndEveryWireShape() async throws {
        let db = try Self.database()
        defer { try? FileManager.default.removeItem(at: db.folder) }
        let originals = Self.everyState()
        #expect(originals.count == TripState.allCases.count + DeliveryStatus.allCases.count)
        do {
            let store = try TestStorage.tripStore(path: db.path)
            for trip in originals { try await store.transaction { tx in try await tx.insert(trip) } }
        }
        // A restart: a new store on the same file, and a service warmed from it.
        let backend = TestBackend(storage: .sqlite(path: db.path))
        try await backend.service.warm()
        let wire = WireMapping(directory: TestDirectory.helsinki)
        for original in originals {
            let decoded = try #require(try backend.store.trip(id: original.id))
            #expect(decoded == original, "\(original.id) came back as \(decoded.status)")
            #expect(try backend.service.cached(original.id)?.status == original.status)
            #expect(wire.snapshot(decoded).status == original.status.name)
            switch original.status {
            case .ride(let state):
                #expect(wire.ride(decoded, now: backend.clock.date).state == state)
            case .delivery(let state):
                let tracking = wire.tracking(decoded, now: backend.clock.date)
                #expect(tracking.status.rawValue == state.rawValue)
                #expect(tracking.problem == (state == .cancelled ? "Cancelled by you" : nil))
                // The bytes the hot path sends say the same.
                let bytes = TrackingJSON.encode(tracking)
                #expect(json(bytes)["status"] as? String == state.rawValue)
            }
        }
    }

    @Test func aStatusNameOutsideTheTripsOwnMachineIsACorruptRecordNotAGuess() throws {
        let bytes = Data(
            (#"{"id":"x","kind":"delivery","version":1,"status":"driverAssigned","customerId":"c1","pickup":{"lat":0,"#
                + #""lng":0},"dropoff":{"lat":0,"lng":0},"createdAt":"2026-10-20T18:40:00Z","#
                + #""updatedAt":"2026-10-20T18:40:00Z"}"#).utf8)
        #expect(throws: DecodingError.self) { try WireCoding.decoder().decode(TripRecord.self, from: bytes) }
    }

    @Test func aCancelledOrderReadsCancelledInItsStreamIn409sAndAfterARestart() async throws {
        let db = try Self.database()
        defer { try? FileManager.default.removeItem(at: db.folder) }
        let sut = try ProviderBackend(startDispatch: false, storage: .sqlite(path: db.path))
        let order = try await sut.backend.placeOrder("c1")
        #expect(await sut.call("POST", "/v1/orders/\(order.orderId)/cancel", as: "c1", .customer).status == 200)
        // A second cancel is refused with the real order in the 409.
        let again = await sut.call("POST", "/v1/orders/\(order.orderId)/cancel", as: "c1", .customer)
        #expect(again.status == 409)
        let conflict = try WireCoding.decoder().decode(ConflictProblem<TrackingDTO>.self, from: Data(again.body))
        #expect(conflict.trip.status == .cancelled && conflict.trip.problem == "Cancelled by you")
        // The live stream's final event.
        var events = await sut.stream("c1", .customer, "/v1/orders/\(order.orderId)/events").makeAsyncIterator()
        var last: ServerSentEvent?
        while let event = try await events.next() { last = event }
        let final = try WireCoding.decoder().decode(TrackingDTO.self, from: Data(try #require(last).data.utf8))
        #expect(final.status == .cancelled)
        // After a restart on the same database.
        let restarted = TestBackend(storage: .sqlite(path: db.path))
        try await restarted.service.warm()
        let read = await restarted.call(
            "GET", "/v1/orders/\(order.orderId)/tracking", token: restarted.token("c1", .customer))
        #expect(read.status == 200)
        let tracking = try WireCoding.decoder().decode(TrackingDTO.self, from: Data(read.body))
        #expect(tracking.status == .cancelled && tracking.problem == "Cancelled by you")
    }

    // MARK: - Defect 3: keys held by a dead process are released at start

    @Test func aRetryOfARequestInFlightAtACrashRunsAtOnceAfterTheRestart() async throws {
        let db = try Self.database()
        defer { try? FileManager.default.removeItem(at: db.folder) }
        let key = "crash-key-0001"
        let body: String
        do {
            // The first process claims the key, then dies before answering.
            let first = TestBackend(storage: .sqlite(path: db.path))
            body = try await first.rideBody("c1")
            let scope = IdempotencyScope(accountId: "c1", method: "POST", path: "/v1/trips", key: key)
            let fingerprint = IdempotencyMiddleware.fingerprint(Array(body.utf8))
            let claim = try await first.service.claim(
                IdempotencyContext(scope: scope, fingerprint: fingerprint) { _ in
                    StoredResponse(status: 500, contentType: "text/plain", body: [])
                })
            #expect(claim == .proceed)
            // Still the same process: a concurrent retry is told to wait.
            #expect(
                await first.call(
                    "POST", "/v1/trips", token: first.token("c1", .customer), json: body,
                    headers: ["Idempotency-Key": key]
                ).status == 409)
        }
        let restarted = TestBackend(storage: .sqlite(path: db.path))
        #expect(try await restarted.service.warm() == 1)
        // No waiting out the lock: the retry runs now, and exactly once.
        let retry = await restarted.call(
            "POST", "/v1/trips", token: restarted.token("c1", .customer), json: body,
            headers: ["Idempotency-Key": key])
        #expect(retry.status == 201)
        let replay = await restarted.call(
            "POST", "/v1/trips", token: restarted.token("c1", .customer), json: body,
            headers: ["Idempotency-Key": key])
        #expect(replay.status == 201 && replay.headers["Idempotent-Replayed"] == "true" && replay.body == retry.body)
        #expect(try restarted.store.activeTrips().count == 1)
    }

    @Test func answeredKeysSurviveTheRestartAndStillReplay() async throws {
        let db = try Self.database()
        defer { try? FileManager.default.removeItem(at: db.folder) }
        let first = TestBackend(storage: .sqlite(path: db.path))
        let body = try await first.rideBody("c1")
        let created = await first.call(
            "POST", "/v1/trips", token: first.token("c1", .customer), json: body,
            headers: ["Idempotency-Key": "answered-key-1"])
        #expect(created.status == 201)
        let restarted = TestBackend(storage: .sqlite(path: db.path))
        #expect(try await restarted.service.warm() == 0)
        let replay = await restarted.call(
            "POST", "/v1/trips", token: restarted.token("c1", .customer), json: body,
            headers: ["Idempotency-Key": "answered-key-1"])
        #expect(replay.status == 201 && replay.body == created.body)
    }

    // MARK: - Defect 5: ended trips do not stay in memory

    @Test func memoryHoldsActiveTripsAndABoundedFewEndedOnesHoweverManyHaveRun() async throws {
        let sut = try ProviderBackend(startDispatch: true, endedCacheLimit: 50)
        var ended: [String] = []
        for i in 0..<400 {
            let customer = "soak-c\(i % 40)", provider = "soak-p\(i % 40)"
            let ride = try await sut.backend.requestRide(customer)
            #expect(await sut.assign(ride.id, to: provider).status == 200)
            if i % 4 == 0 {
                #expect(await sut.call("POST", "/v1/trips/\(ride.id)/cancel", as: customer, .customer).status == 200)
            } else {
                for step in ["driverArrived", "onTrip", "completed"] {
                    #expect(await sut.backend.step(ride.id, step, provider: provider).status == 200)
                }
            }
            ended.append(ride.id)
        }
        let open = try await sut.backend.requestRide("soak-open")
        #expect(sut.service.cachedTripCount <= 50 + 1)
        // Each ended trip's search stops (on its own task, once it hears of the change).
        try await eventually("at most one search is left running") { sut.providers.dispatcher.activeSearches <= 1 }
        // Nothing ended is lost: an evicted trip is read from the store, and only its parties see it.
        let first = await sut.call("GET", "/v1/trips/\(ended[0])", as: "soak-c0", .customer)
        #expect(first.status == 200 && json(first.body)["state"] as? String == "cancelled")
        #expect(await sut.call("GET", "/v1/trips/\(ended[0])", as: "soak-c1", .customer).status == 404)
        // Reading old trips does not grow memory past the bound either.
        for id in ended.prefix(200) { _ = try sut.service.cached(id) }
        #expect(sut.service.cachedTripCount <= 50 + 1)
        #expect(try sut.service.cached(open.id)?.status == .ride(.searching))
        #expect(sut.service.activeTrips(customer: "soak-open").map(\.id) == [open.id])
        #expect(sut.service.activeTrips(customer: "soak-c0").isEmpty)
    }
}
