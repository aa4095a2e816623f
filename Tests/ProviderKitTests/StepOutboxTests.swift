import Foundation
import Testing
import EnRouteModels
import ProviderKit
import TestSupport

/// The outbox and its sync engine against the real server in-process, through a transport that misbehaves.
@Suite struct StepOutboxTests {
    static let rideSteps: [ProviderStep] = [.driverArrived, .onTrip, .completed]

    /// 30% of requests lose the request, lose the answer, go twice or meet a 503; three trips' steps interleave;
    /// the app is killed and restarted mid-run.
    @Test(arguments: [1, 2, 3, 4, 5, 6, 7, 8] as [UInt64])
    func everyStepIsAppliedExactlyOnceInOrderWithItsDeviceTime(seed: UInt64) async throws {
        try await Self.runFaultyShift(seed: seed, customers: ["c1", "c2", "c3"], restartAfter: [7])
    }

    /// A longer shift: ten trips, three restarts, and every kind of fault met at least once.
    @Test func aLongShiftThroughEveryKindOfFaultLosesAndDuplicatesNothing() async throws {
        let transport = try await Self.runFaultyShift(
            seed: 42, customers: (1...10).map { "c\($0)" }, restartAfter: [5, 12, 23])
        for fault in FaultInjectingHTTPClient.Fault.allCases {
            #expect(
                transport.count(fault) > 0,
                "\(fault) happened: \(FaultInjectingHTTPClient.Fault.allCases.map { ($0, transport.count($0)) })")
        }
    }

    /// Reports ride steps on one trip per customer, interleaved, restarting the app after the given numbers of
    /// taps, syncs to the end through a 30% faulty transport, and checks the server's change log.
    @discardableResult
    static func runFaultyShift(
        seed: UInt64, customers: [String], restartAfter restarts: Set<Int>
    ) async throws -> FaultInjectingHTTPClient {
        let backend = TestBackend()
        var trips: [TripSnapshot] = []
        for customer in customers { trips.append(try await backend.assignedRide(customer: customer)) }
        let (inner, server) = backend.client("p1", .provider)
        let transport = FaultInjectingHTTPClient.random(wrapping: inner, seed: seed, rate: 0.3)
        let file = TemporaryStorePath()
        defer { file.remove() }
        let ids = SequentialIDs("change")

        var device = try ProviderDevice(
            path: file.path, client: transport, server: server, clock: backend.clock, ids: ids)
        var reported: [String: [StepChange]] = [:]
        var taps = 0
        for step in rideSteps {
            for trip in trips {
                if restarts.contains(taps) {
                    // Kill the app while changes may still be queued, then start it again on the same file.
                    await device.kill()
                    device = try ProviderDevice(
                        path: file.path, client: transport, server: server, clock: backend.clock, ids: ids)
                }
                let current = try device.outbox.trip(trip.id)?.server ?? trip
                reported[trip.id, default: []].append(try device.engine.reportStep(step, on: current).change)
                taps += 1
                await backend.clock.advance(by: .milliseconds(2_250))
            }
        }
        try await device.syncUntilEmpty(backend.clock)
        await device.kill()

        for trip in trips {
            let applied = try backend.store.changes(tripId: trip.id).filter { $0.changeId != nil }
            let sent = try #require(reported[trip.id])
            #expect(applied.map(\.changeId) == sent.map(\.changeId))
            #expect(applied.map(\.status) == ["driverArrived", "onTrip", "completed"])
            for (entry, change) in zip(applied, sent) {
                let kept = try #require(entry.deviceTime)
                #expect(abs(kept.timeIntervalSince(change.deviceTime)) < 0.001)
            }
        }
        let reopened = try ProviderStore(path: file.path)
        defer { reopened.close() }
        let outbox = StepOutbox(
            store: reopened, positions: try PointBuffer(store: reopened, makeID: ids.maker),
            dates: backend.clock.dates, makeID: ids.maker)
        #expect(try outbox.trips().map(\.displayedStatus) == Array(repeating: "completed", count: trips.count))
        #expect(try outbox.pending().isEmpty)
        return transport
    }

    /// The worst moment to die: the server applied the step, the answer was lost, and the app was killed.
    @Test func aStepWhoseAnswerWasLostBeforeARestartIsNotAppliedTwice() async throws {
        let backend = TestBackend()
        let trip = try await backend.assignedRide()
        let (inner, server) = backend.client("p1", .provider)
        let transport = FaultInjectingHTTPClient(wrapping: inner) { n, _ in n == 1 ? .dropResponse : .none }
        let file = TemporaryStorePath()
        defer { file.remove() }
        let ids = SequentialIDs("change")

        var device = try ProviderDevice(
            path: file.path, client: transport, server: server, clock: backend.clock, ids: ids)
        let change = try device.engine.reportStep(.driverArrived, on: trip).change
        try await eventually("the lost answer") {
            transport.count(.dropResponse) == 1 && backend.clock.sleeperCount > 0
        }
        await device.kill()
        device = try ProviderDevice(path: file.path, client: transport, server: server, clock: backend.clock, ids: ids)
        try await device.syncUntilEmpty(backend.clock)
        await device.kill()

        let applied = try backend.store.changes(tripId: trip.id).filter { $0.changeId != nil }
        #expect(applied.map(\.changeId) == [change.changeId])
        #expect(transport.requests.filter { $0.request.url.path.hasSuffix("/steps") }.count == 2)
    }

    @Test func aChangeWaitsOfflineAndIsSentWhenTheNetworkReturns() async throws {
        let backend = TestBackend()
        let trip = try await backend.assignedRide()
        let (inner, server) = backend.client("p1", .provider)
        let transport = FaultInjectingHTTPClient(wrapping: inner) { _, _ in .none }
        transport.isOffline = true
        let file = TemporaryStorePath()
        defer { file.remove() }
        let device = try ProviderDevice(
            path: file.path, client: transport, server: server, clock: backend.clock, ids: SequentialIDs("c"))

        let (_, local) = try device.engine.reportStep(.driverArrived, on: trip)
        #expect(local.displayedStatus == "driverArrived")
        #expect(local.pendingSteps == 1)
        for _ in 0..<5 {
            try await eventually("a retry pause") { backend.clock.sleeperCount > 0 }
            await backend.clock.advance(by: .seconds(8))
        }
        #expect(try device.outbox.pending().count == 1)
        #expect(try backend.store.changes(tripId: trip.id).allSatisfy { $0.changeId == nil })

        transport.isOffline = false
        try await device.syncUntilEmpty(backend.clock)
        await device.kill()
        #expect(try backend.store.changes(tripId: trip.id).compactMap(\.changeId).count == 1)
    }

    /// Connectivity comes back in the middle of a long retry pause: `requestRun()` sends at once.
    @Test func aRunRequestCutsARetryPauseShort() async throws {
        let backend = TestBackend()
        let trip = try await backend.assignedRide()
        let (inner, server) = backend.client("p1", .provider)
        let transport = FaultInjectingHTTPClient(wrapping: inner) { _, _ in .none }
        transport.isOffline = true
        let file = TemporaryStorePath()
        defer { file.remove() }
        let device = try ProviderDevice(
            path: file.path, client: transport, server: server, clock: backend.clock, ids: SequentialIDs("c"),
            backoff: SyncBackoff(initial: .seconds(60), maximum: .seconds(60)))
        try device.engine.reportStep(.driverArrived, on: trip)
        try await eventually("the retry pause") { backend.clock.sleeperCount > 0 }

        transport.isOffline = false
        device.engine.requestRun()
        try await eventually("the send") { try device.outbox.pending().isEmpty }
        #expect(try backend.store.changes(tripId: trip.id).compactMap(\.changeId).count == 1)
        await device.kill()
    }

    @Test func aLateStepAfterTheCustomerCancelledIsRejectedAndTheScreenShowsTheRealState() async throws {
        let backend = TestBackend()
        let trip = try await backend.assignedRide()
        let (inner, server) = backend.client("p1", .provider)
        let transport = FaultInjectingHTTPClient(wrapping: inner) { _, _ in .none }
        transport.isOffline = true
        let file = TemporaryStorePath()
        defer { file.remove() }
        let device = try ProviderDevice(
            path: file.path, client: transport, server: server, clock: backend.clock, ids: SequentialIDs("c"))
        let screen = await ProviderTripViewModel(engine: device.engine)
        await screen.start()
        await screen.receive(trip)

        await screen.reportStep()  // "Arrived", tapped in a basement
        #expect(await screen.state.trip?.displayedStatus == "driverArrived")
        #expect(await screen.state.isSyncing)
        try await backend.cancelRide(trip.id)  // meanwhile the customer cancels

        transport.isOffline = false
        try await device.syncUntilEmpty(backend.clock)
        try await eventually("the rollback on screen") { await screen.state.trip?.displayedStatus == "cancelled" }
        let state = await screen.state
        #expect(state.trip?.server.status == "cancelled")
        #expect(state.isSyncing == false)
        #expect(state.nextStep == nil)
        #expect(state.notice?.contains("cancelled by the customer") == true)
        #expect(try backend.store.changes(tripId: trip.id).allSatisfy { $0.changeId == nil })
        await screen.stop()
        await device.kill()
    }
}
