import Foundation
import Testing
import Synchronization
import HTTPTransport
import EnRouteModels
import EnRouteDomain
import EnRouteAPI
import TestSupport
@testable import RideHailing

/// The rider kit against the real trip service in-process: the two sides cannot drift.
@MainActor @Suite struct RideContractTests {
    /// An HTTP client that loses chosen answers or drops the first live stream, over the real router.
    final class FlakyClient: HTTPClient, @unchecked Sendable {
        let inner: InProcessHTTPClient
        let loseAnswers = Mutex(0)
        let dropStreamsAfter = Mutex<[Int]>([])
        let streamsOpened = Mutex(0)
        let tripPosts = Mutex(0)

        init(_ inner: InProcessHTTPClient) { self.inner = inner }

        func send(_ request: HTTPClientRequest) async throws -> HTTPClientResponse {
            let response = try await inner.send(request)
            if request.method == "POST", request.url.path == "/v1/trips" {
                tripPosts.withLock { $0 += 1 }
                // The server did the work; the client never hears back.
                if loseAnswers.withLock({ n in
                    defer { n = max(0, n - 1) }; return n > 0
                }) {
                    throw HTTPClientError.network("connection reset")
                }
            }
            return response
        }

        func events(_ request: HTTPClientRequest) -> AsyncThrowingStream<ServerSentEvent, any Error> {
            streamsOpened.withLock { $0 += 1 }
            let limit = dropStreamsAfter.withLock { $0.isEmpty ? nil : $0.removeFirst() }
            let upstream = inner.events(request)
            return AsyncThrowingStream { continuation in
                let task = Task {
                    var count = 0
                    do {
                        for try await event in upstream {
                            continuation.yield(event)
                            count += 1
                            if let limit, count >= limit { throw HTTPClientError.network("stream dropped") }
                        }
                        continuation.finish()
                    } catch {
                        continuation.finish(throwing: error)
                    }
                }
                continuation.onTermination = { _ in task.cancel() }
            }
        }
    }

    struct SilentLogger: RideLogger { func warning(_ message: String) {} }

    func makeSUT() -> (TestBackend, FlakyClient, TripViewModel) {
        let backend = TestBackend()
        let (http, server) = backend.client("c1", .customer)
        let flaky = FlakyClient(http)
        let vm = TripViewModel(
            api: RemoteTripAPI(client: flaky, server: server),
            channel: SSELiveTripChannel(client: flaky, server: server),
            clock: backend.clock, logger: SilentLogger())
        return (backend, flaky, vm)
    }

    static let pickup = Coordinate(lat: 60.1699, lng: 24.9384), dropoff = Coordinate(lat: 60.1841, lng: 24.9497)

    /// The request the rider's screen makes: a saved card, the prices loaded, then the economy quote confirmed.
    func quotedRequest(_ backend: TestBackend, _ vm: TripViewModel) async throws -> TripRequest {
        let (http, server) = backend.client("c1", .customer)
        let card = try await RemoteTripAPI(client: http, server: server).addPaymentMethod(
            token: "pm_card_visa", makeDefault: true)
        #expect(card.isDefault)
        await vm.loadEstimates(pickup: Self.pickup, dropoff: Self.dropoff)
        let quote = try #require(vm.state.estimates.first { $0.productID == "economy" }?.quoteId)
        return TripRequest(pickup: Self.pickup, dropoff: Self.dropoff, productID: "economy", quoteId: quote)
    }

    func move(_ backend: TestBackend, _ trip: String, _ step: String) async {
        let r = await backend.call(
            "POST", "/v1/provider/trips/\(trip)/steps", token: backend.token("p1", .provider),
            json: #"{"changeId":"\#(UUID().uuidString)","step":"\#(step)","deviceTime":"2026-10-20T18:40:00Z"}"#)
        #expect(r.status == 200, "\(step)")
    }

    /// The ride tracking screen's `routeData` against the real server routing on central Helsinki: the road line,
    /// driver first.
    @Test func routeDataIsTheServersRoadRouteFromTheDriver() async throws {
        let backend = TestBackend(roads: try await TestRoads.helsinki())
        let (http, server) = backend.client("c1", .customer)
        let api = RemoteTripAPI(client: http, server: server)
        let feed = LiveTripFeed(
            api: api, channel: SSELiveTripChannel(client: http, server: server), clock: backend.clock,
            logger: SilentLogger())
        let pickup = Coordinate(lat: 60.1670, lng: 24.9365), dropoff = Coordinate(lat: 60.1690, lng: 24.9490)
        _ = try await api.addPaymentMethod(token: "pm_card_visa", makeDefault: true)
        let quote = try #require(
            try await api.estimate(pickup: pickup, dropoff: dropoff).first { $0.productID == "economy" }?.quoteId)
        let trip = try await api.requestTrip(
            TripRequest(pickup: pickup, dropoff: dropoff, productID: "economy", quoteId: quote), idempotencyKey: UUID())
        #expect(await backend.assign(trip.id, to: "p1").status == 200)
        let driver = Coordinate(lat: 60.1705, lng: 24.9420)
        let batch =
            #"{"batchId":"b1","fixes":[{"lat":\#(driver.lat),"lng":\#(driver.lng),"heading":180,"speed":8,"#
            + #""accuracy":5,"recordedAt":"\#(ISO8601.format(backend.clock.date))"}]}"#
        #expect(
            await backend.call("POST", APIPath.providerLocations, token: backend.token("p1", .provider), json: batch)
                .status == 200)

        let line = try RouteDecoder.decode(try await LiveRideService(feed: feed).routeData(rideID: trip.id))
        #expect(line.count >= 4)
        let first = try #require(line.first), last = try #require(line.last)
        #expect(
            abs(first.lat - driver.lat) < 0.0005 && abs(first.lng - driver.lng) < 0.001, "the line starts at the driver"
        )
        #expect(
            abs(last.lat - dropoff.lat) < 0.0005 && abs(last.lng - dropoff.lng) < 0.001, "the line ends at the drop-off"
        )
    }

    @Test func aRetriedRequestWithOneKeyCreatesOneTrip() async throws {
        let (backend, flaky, vm) = makeSUT()
        flaky.loseAnswers.withLock { $0 = 1 }
        let request = try await quotedRequest(backend, vm)
        let requesting = Task { await vm.requestRide(request) }
        await backend.clock.sleepers(atLeast: 1)  // the 1 s pause before the second attempt
        await backend.clock.advance(by: .seconds(1))
        await requesting.value
        #expect(flaky.tripPosts.withLock { $0 } == 2)
        #expect(try backend.store.trips(status: nil, limit: 10).count == 1)
        #expect(vm.state.trip?.id == (try backend.store.trips(status: nil, limit: 10).first?.id))
        vm.stopLive()
    }

    @Test func resyncThenStreamSeesEveryVersionInOrderAcrossAWholeRide() async throws {
        let (backend, flaky, vm) = makeSUT()
        await vm.requestRide(try await quotedRequest(backend, vm))
        let trip = try #require(vm.state.trip)
        try await eventually("the live stream is attached") { backend.api.watcherCount(trip.id) > 0 }
        var seen: [Int] = [trip.version]
        let accepted = await backend.assign(trip.id, to: "p1")
        #expect(accepted.status == 200)
        try await eventually("version 2 shown") { vm.state.trip?.version == 2 }
        seen.append(vm.state.trip?.version ?? 0)
        for (step, version) in [("driverArrived", 3), ("onTrip", 4), ("completed", 5)] {
            await move(backend, trip.id, step)
            try await eventually("version \(version) shown") { vm.state.trip?.version == version }
            seen.append(vm.state.trip?.version ?? 0)
        }
        await vm.waitForLiveToEnd()
        #expect(seen == [1, 2, 3, 4, 5])
        #expect(vm.state.trip?.state == .completed)
        #expect(vm.state.trip?.driver?.id == "p1")
        #expect(flaky.streamsOpened.withLock { $0 } == 1)
    }

    /// Issue 11 item 7: each fix's ETA reaches the rider on its `driverMoved`, so the ETA moves while the version
    /// stays.
    @Test func fixesStreamInAndTheRidersETAMovesWithoutAVersionBump() async throws {
        let (backend, _, vm) = makeSUT()
        await vm.requestRide(try await quotedRequest(backend, vm))
        let trip = try #require(vm.state.trip)
        try await eventually("the live stream is attached") { backend.api.watcherCount(trip.id) > 0 }
        #expect(await backend.assign(trip.id, to: "p1").status == 200)
        try await eventually("version 2 shown") { vm.state.trip?.version == 2 }

        let provider = backend.token("p1", .provider)
        var etas: [Int] = []
        // 33 m every 5 s: a pace the ingest filters keep.
        for (index, lat) in [60.1799, 60.1796, 60.1793].enumerated() {
            await backend.clock.advance(by: .seconds(5))
            let fix =
                #"{"lat":\#(lat),"lng":24.9384,"heading":180,"speed":8,"accuracy":5,"#
                + #""recordedAt":"\#(ISO8601.format(backend.clock.date))"}"#
            let posted = await backend.call(
                "POST", "/v1/provider/locations", token: provider, json: #"{"batchId":"b\#(index)","fixes":[\#(fix)]}"#)
            #expect(posted.status == 200)
            try await eventually("fix \(index + 1) applied") { vm.state.liveETA.seq == Int64(index + 1) }
            let server = try #require(try backend.service.cached(trip.id))
            let expected = try #require(server.etaLatest).timeIntervalSince(backend.clock.date).rounded(.up)
            #expect(vm.state.etaSeconds == Int(expected), "the ETA the server computed for fix \(index + 1)")
            #expect(vm.state.liveETA.latest == server.etaLatest)
            etas.append(vm.state.etaSeconds ?? -1)
        }
        #expect(vm.state.trip?.version == 2, "no version bump")
        #expect(etas == etas.sorted(by: >) && Set(etas).count == 3, "the ETA falls as the driver comes closer: \(etas)")
        vm.stopLive()
    }

    @Test func aDroppedStreamReconnectsWithBackoffAndResyncs() async throws {
        let (backend, flaky, vm) = makeSUT()
        flaky.dropStreamsAfter.withLock { $0 = [1] }  // the first stream breaks right after its resync event
        await vm.requestRide(try await quotedRequest(backend, vm))
        let trip = try #require(vm.state.trip)
        await backend.clock.sleepers(atLeast: 1)  // backing off after the drop
        // While the rider is disconnected the driver accepts and arrives: nothing is replayed, the resync carries it.
        _ = await backend.assign(trip.id, to: "p1")
        await move(backend, trip.id, "driverArrived")
        #expect(vm.state.trip?.version == 1)
        await backend.clock.advance(by: .seconds(2))  // first backoff: 2 s
        try await eventually("resynced to version 3") { vm.state.trip?.version == 3 }
        #expect(vm.state.trip?.state == .driverArrived)
        try await eventually("streaming again") { backend.api.watcherCount(trip.id) > 0 }
        #expect(flaky.streamsOpened.withLock { $0 } == 2)
        await move(backend, trip.id, "onTrip")
        try await eventually("live again") { vm.state.trip?.version == 4 }
        vm.stopLive()
    }
}
