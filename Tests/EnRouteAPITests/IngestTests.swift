import Foundation
import Testing
import EnRouteModels
import EnRouteDomain
import EnRouteAPI
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
        let older = try await sut.upload(
            "p1", batch: "b2", [sut.fix(north: 30, after: -1.5), sut.fix(north: 60, after: 0)])
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
        FilterCase(reason: .duplicate) {
            let f = $0.fix(after: -10); return [f, f]
        },
        FilterCase(reason: .tooFast) { [$0.fix(after: -10), $0.fix(north: 1_000, after: 0)] },  // 100 m/s
        FilterCase(reason: .teleport) { [$0.fix(after: -10), $0.fix(north: 500, after: -9)] },  // 500 m in 1 s
    ]

    @Test(arguments: filterCases)
    func eachPlausibilityFilterDropsAndCountsItsReason(_ filter: FilterCase) async throws {
        let sut = try makeSUT()
        let trip = try await assignedRide(sut)
        let result = try await sut.upload("p1", batch: "b1", filter.make(sut)).result
        #expect(result?.accepted == 1 && result?.dropped == 1)
        #expect(
            sut.metrics.counter("enroute_location_fixes_dropped_total", labels: ["reason": filter.reason.rawValue]) == 1
        )
        #expect(try await sut.paths.path(tripId: trip.id).count == 1)
        let metrics = await sut.call("GET", "/metrics", as: "ops", .ops)
        #expect(
            String(decoding: metrics.body, as: UTF8.self).contains(
                #"enroute_location_fixes_dropped_total{reason="\#(filter.reason.rawValue)"} 1"#))
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
        let before = LocationFix(
            lat: 60, lng: 24, heading: 0, speed: 0, accuracy: 5, recordedAt: now.addingTimeInterval(-600))
        let far = LocationFix(lat: 61, lng: 24, heading: 0, speed: 0, accuracy: 5, recordedAt: now)
        #expect(policy.judge(far, after: before, now: now) == nil)
        let soon = LocationFix(
            lat: 61, lng: 24, heading: 0, speed: 0, accuracy: 5, recordedAt: before.recordedAt.addingTimeInterval(60))
        #expect(policy.judge(soon, after: before, now: now) == .tooFast)
    }

    @Test func theLatestFixExpiresAfterItsLifetime() async throws {
        let sut = try makeSUT()
        #expect(await sut.online("p1", at: ProviderBackend.north(100)) == 200)
        #expect(try await sut.upload("p1", batch: "b1", [sut.fix(north: 120)]).result?.accepted == 1)
        #expect(try await sut.providers.presence.position(of: "p1")?.coordinate == ProviderBackend.north(120))
        #expect(try await sut.providers.nearby(ProviderBackend.pickup).count == 1)
        await sut.clock.advance(by: .seconds(121))
        #expect(try await sut.providers.presence.position(of: "p1") == nil)
        #expect(try await sut.providers.nearby(ProviderBackend.pickup).isEmpty)
        #expect(
            try await sut.providers.presence.nearest(to: ProviderBackend.pickup, limit: 5, within: 10_000) { _ in true }
                .isEmpty)
        // A new fix makes the provider findable again.
        #expect(try await sut.upload("p1", batch: "b2", [sut.fix(north: 130)]).result?.accepted == 1)
        #expect(try await sut.providers.nearby(ProviderBackend.pickup).count == 1)
    }

    @Test func fixesWhileIdleMoveThePositionButNoPath() async throws {
        let sut = try makeSUT()
        await sut.online("p1", at: ProviderBackend.north(0))
        #expect(try await sut.upload("p1", batch: "b1", [sut.fix(north: 50, after: 1)]).result?.accepted == 1)
        #expect(try await sut.providers.presence.position(of: "p1")?.coordinate == ProviderBackend.north(50))
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
        let response = await sut.router.respond(
            to: HTTPRequest(method: "GET", path: "/v1/trips/\(trip.id)/events", headers: headers))
        guard case .eventStream(let stream) = response.body else {
            Issue.record("not a stream: \(response.status)"); return
        }
        var writes = stream.bytes().makeAsyncIterator()
        _ = await writes.next()  // retry:
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
}
