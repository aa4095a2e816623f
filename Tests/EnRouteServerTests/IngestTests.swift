import Foundation
import Testing
import EnRouteModels
import EnRouteDomain
import EnRouteAPI
import EnRouteStorage
import HTTPEngine
import TestSupport

/// Location ingest: batches applied once, in order, through the plausibility filters, onto the trip's path.
@Suite(.timeLimit(.minutes(1))) struct IngestTests {
    func makeSUT() throws -> ProviderBackend { try ProviderBackend(startDispatch: false) }

    /// A ride assigned to `provider` by a direct accept.
    func assignedRide(_ sut: ProviderBackend, provider: String = "p1") async throws -> Trip {
        let trip = try await sut.requestRide()
        #expect(await sut.assign(trip.id, to: provider).status == 200)
        return trip
    }

    @Test func aResentBatchGetsTheSameAnswerAndIsNotAppliedTwice() async throws {
        let sut = try makeSUT()
        let trip = try await assignedRide(sut)
        let fixes = [sut.fix(north: 0, after: -3), sut.fix(north: 20, after: -2), sut.fix(north: 40, after: -1)]
        let first = try await sut.upload("p1", batch: "b1", fixes)
        #expect(first.status == 200)
        #expect(first.result == LocationBatchResult(batchId: "b1", accepted: 3, dropped: 0))
        let again = try await sut.upload("p1", batch: "b1", fixes)
        #expect(again.result == first.result)
        #expect(try await sut.paths.path(tripId: trip.id).count == 3)
        #expect(try sut.trip(trip.id)?.providerFix?.seq == 3)
        #expect(sut.metrics.counter("enroute_location_batches_replayed_total") == 1)
        // The same batch id from another provider is that provider's own batch.
        #expect(try await sut.upload("p2", batch: "b1", [sut.fix(north: 10)]).result?.accepted == 1)
    }

    @Test func fixesAreAppliedInRecordedOrderAndAnOlderOneIsDropped() async throws {
        let sut = try makeSUT()
        let trip = try await assignedRide(sut)
        let shuffled = [sut.fix(north: 40, after: -1), sut.fix(north: 0, after: -3), sut.fix(north: 20, after: -2)]
        #expect(try await sut.upload("p1", batch: "b1", shuffled).result?.accepted == 3)
        let path = try await sut.paths.path(tripId: trip.id)
        #expect(path.map(\.recordedAt) == path.map(\.recordedAt).sorted())
        #expect(try sut.trip(trip.id)?.providerFix?.coordinate == shuffled[0].coordinate)
        let older = try await sut.upload("p1", batch: "b2", [sut.fix(north: 30, after: -1.5), sut.fix(north: 60, after: 0)])
        #expect(older.result == LocationBatchResult(batchId: "b2", accepted: 1, dropped: 1))
        #expect(sut.metrics.counter("enroute_location_fixes_dropped_total", labels: ["reason": "stale"]) == 1)
        #expect(try await sut.paths.path(tripId: trip.id).count == 4)
    }

    struct FilterCase: Sendable, CustomTestStringConvertible {
        let reason: FixDropReason
        /// The batch: a good reference fix, then the fix under test.
        let make: @Sendable (ProviderBackend) -> [LocationFix]
        var testDescription: String { reason.rawValue }
    }

    static let filterCases: [FilterCase] = [
        FilterCase(reason: .inaccurate) { [$0.fix(after: -10), $0.fix(north: 10, after: -5, accuracy: 80)] },
        FilterCase(reason: .future) { [$0.fix(after: -10), $0.fix(north: 10, after: 300)] },
        FilterCase(reason: .duplicate) { let f = $0.fix(after: -10); return [f, f] },
        FilterCase(reason: .tooFast) { [$0.fix(after: -10), $0.fix(north: 1_000, after: 0)] },   // 100 m/s
        FilterCase(reason: .teleport) { [$0.fix(after: -10), $0.fix(north: 500, after: -9)] },  // 500 m in 1 s
    ]

    @Test(arguments: filterCases)
    func eachPlausibilityFilterDropsAndCountsItsReason(_ filter: FilterCase) async throws {
        let sut = try makeSUT()
        let trip = try await assignedRide(sut)
        let result = try await sut.upload("p1", batch: "b1", filter.make(sut)).result
        #expect(result?.accepted == 1 && result?.dropped == 1)
        #expect(sut.metrics.counter("enroute_location_fixes_dropped_total", labels: ["reason": filter.reason.rawValue]) == 1)
        #expect(try await sut.paths.path(tripId: trip.id).count == 1)
        let metrics = await sut.call("GET", "/metrics", as: "ops", .ops)
        #expect(String(decoding: metrics.body, as: UTF8.self).contains(#"enroute_location_fixes_dropped_total{reason="\#(filter.reason.rawValue)"} 1"#))
    }

    @Test func aReportedSpeedAboveTheLimitIsDropped() {
        let policy = FixPlausibilityPolicy()
        let now = Date(timeIntervalSince1970: 1_792_520_000)
        let fix = LocationFix(lat: 60, lng: 24, heading: 0, speed: 90, accuracy: 5, recordedAt: now)
        #expect(policy.judge(fix, after: nil, now: now) == .tooFast)
    }

    /// After a gap longer than `continuity` the last kept fix is no reference: the provider may be anywhere.
    @Test func aLongGapResetsTheSpeedCheck() {
        let policy = FixPlausibilityPolicy()
        let now = Date(timeIntervalSince1970: 1_792_520_000)
        let before = LocationFix(lat: 60, lng: 24, heading: 0, speed: 0, accuracy: 5, recordedAt: now.addingTimeInterval(-600))
        let far = LocationFix(lat: 61, lng: 24, heading: 0, speed: 0, accuracy: 5, recordedAt: now)
        #expect(policy.judge(far, after: before, now: now) == nil)
        let soon = LocationFix(lat: 61, lng: 24, heading: 0, speed: 0, accuracy: 5, recordedAt: before.recordedAt.addingTimeInterval(60))
        #expect(policy.judge(soon, after: before, now: now) == .tooFast)
    }

    @Test func theLatestFixExpiresAfterItsLifetime() async throws {
        let sut = try makeSUT()
        #expect(await sut.online("p1", at: ProviderBackend.north(100)) == 200)
        #expect(try await sut.upload("p1", batch: "b1", [sut.fix(north: 120)]).result?.accepted == 1)
        #expect(sut.providers.presence.position(of: "p1")?.coordinate == ProviderBackend.north(120))
        #expect(sut.providers.nearby(ProviderBackend.pickup).count == 1)
        await sut.clock.advance(by: .seconds(121))
        #expect(sut.providers.presence.position(of: "p1") == nil)
        #expect(sut.providers.nearby(ProviderBackend.pickup).isEmpty)
        #expect(sut.providers.presence.nearest(to: ProviderBackend.pickup, limit: 5, within: 10_000).isEmpty)
        // A new fix makes the provider findable again.
        #expect(try await sut.upload("p1", batch: "b2", [sut.fix(north: 130)]).result?.accepted == 1)
        #expect(sut.providers.nearby(ProviderBackend.pickup).count == 1)
    }

    @Test func fixesWhileIdleMoveThePositionButNoPath() async throws {
        let sut = try makeSUT()
        await sut.online("p1", at: ProviderBackend.north(0))
        #expect(try await sut.upload("p1", batch: "b1", [sut.fix(north: 50, after: 1)]).result?.accepted == 1)
        #expect(sut.providers.presence.position(of: "p1")?.coordinate == ProviderBackend.north(50))
        #expect(sut.metrics.counter("enroute_location_fixes_accepted_total") == 1)
    }

    @Test func keptFixesReachTheTripsWatchersAtOnce() async throws {
        let sut = try makeSUT()
        let trip = try await assignedRide(sut)
        var updates = sut.service.hub.subscribe(trip.id).makeAsyncIterator()
        _ = try await sut.upload("p1", batch: "b1", [sut.fix(north: 10, after: -1), sut.fix(north: 30, after: 0)])
        #expect(await updates.next()?.providerFix?.seq == 1)
        #expect(await updates.next()?.providerFix?.coordinate == ProviderBackend.north(30))
    }

    @Test func aBatchReachesEachLiveWatcherAsOneWriteWithEveryStepInOrder() async throws {
        let sut = try makeSUT()
        let trip = try await assignedRide(sut)
        var headers = HTTPHeaders()
        headers.add("Authorization", "Bearer \(sut.token("c1", .customer))")
        let response = await sut.router.respond(to: HTTPRequest(method: "GET", path: "/v1/trips/\(trip.id)/events", headers: headers))
        guard case .eventStream(let stream) = response.body else { Issue.record("not a stream: \(response.status)"); return }
        var writes = stream.bytes().makeAsyncIterator()
        _ = await writes.next()   // retry:
        let opening = await writes.next().map { String(decoding: $0, as: UTF8.self) } ?? ""
        #expect(opening.contains("event: tripUpdated") && !opening.contains("driverMoved"))
        let batch = [sut.fix(north: 10, after: -3), sut.fix(north: 20, after: -2), sut.fix(north: 30, after: -1)]
        #expect(try await sut.upload("p1", batch: "b1", batch).result?.accepted == 3)
        let write = await writes.next().map { String(decoding: $0, as: UTF8.self) } ?? ""
        let ids = write.split(separator: "\n").filter { $0.hasPrefix("id: ") }
        #expect(ids == ["id: 2.1", "id: 2.2", "id: 2.3"], "one write carrying every fix of the batch: \(write)")
        #expect(write.components(separatedBy: "event: driverMoved").count == 4)
    }

    @Test func aBatchOverOneHundredFixesOrWithABadFieldIs422() async throws {
        let sut = try makeSUT()
        let many = (0..<101).map { sut.fix(north: Double($0), after: Double($0) - 200) }
        #expect(try await sut.upload("p1", batch: "b1", many).status == 422)
        #expect(try await sut.upload("p1", batch: "", [sut.fix()]).status == 422)
        let bad = LocationFix(lat: 91, lng: 24, heading: 0, speed: 0, accuracy: 5, recordedAt: sut.clock.date)
        #expect(try await sut.upload("p1", batch: "b2", [bad]).status == 422)
    }

    /// A trip store in a fresh temporary folder, which the caller removes.
    static func tripDatabase() throws -> (SQLiteTripStore, URL) {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("paths-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return (try SQLiteTripStore(path: dir.appendingPathComponent("db.sqlite").path), dir)
    }

    @Test func theSQLitePathStoreKeepsEachTripsPathOnceAndInOrder() async throws {
        let (trips, dir) = try Self.tripDatabase()
        defer { try? FileManager.default.removeItem(at: dir) }
        let store = try SQLitePathStore(tripStore: trips)
        let start = Date(timeIntervalSince1970: 1_792_520_000)
        func point(_ trip: String, _ i: Int) -> PathPoint {
            PathPoint(tripId: trip, providerId: "p1", lat: 60 + Double(i) * 1e-4, lng: 24.9, heading: 10, speed: 7, accuracy: 5,
                      recordedAt: start.addingTimeInterval(Double(i)), receivedAt: start.addingTimeInterval(Double(i) + 0.5))
        }
        // Concurrent appends share commits; every caller returns after its points are stored.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for batch in 0..<20 {
                group.addTask { try await store.append((0..<5).map { point("T\(batch % 2)", batch * 5 + $0) }.reversed()) }
            }
            try await group.waitForAll()
        }
        try await store.append([point("T0", 0), point("T0", 10)])   // already stored: ignored
        let t0 = try await store.path(tripId: "T0")
        #expect(t0.count == 50)
        #expect(t0.map(\.recordedAt) == t0.map(\.recordedAt).sorted())
        #expect(t0.first == point("T0", 0))
        // The path survives reopening the database.
        let reopened = try SQLitePathStore(path: trips.path)
        #expect(try await reopened.path(tripId: "T1").count == 50)
    }

    @Test func manyAppendsAtOnceAreAllCommittedAcrossSeveralTurnsOfTheSharedWriter() async throws {
        let (trips, dir) = try Self.tripDatabase()
        defer { try? FileManager.default.removeItem(at: dir) }
        let paths = try SQLitePathStore(tripStore: trips)
        let start = Date(timeIntervalSince1970: 1_792_520_000)
        // 40 appends of 100 rows: more than a turn's worth, so the writer goes round several times,
        // and trip transactions queued meanwhile run between the turns.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for batch in 0..<40 {
                group.addTask {
                    try await paths.append((0..<100).map { i in
                        PathPoint(tripId: "T\(batch % 4)", providerId: "p1", lat: 60, lng: 24.9, heading: 0, speed: 7, accuracy: 5,
                                  recordedAt: start.addingTimeInterval(Double(batch * 100 + i)), receivedAt: start)
                    })
                }
                if batch % 10 == 0 { group.addTask { _ = try await trips.transaction { tx in try await tx.trip("none") } } }
            }
            try await group.waitForAll()
        }
        for trip in 0..<4 { #expect(try await paths.path(tripId: "T\(trip)").count == 1_000) }
    }
}
