import Foundation
import Testing
import EnRouteModels
import ProviderKit
import TestSupport

@MainActor
@Suite struct ProviderTripViewModelTests {
    /// A screen whose transport is the real server behind a switchable network.
    func makeSUT(
        _ backend: TestBackend, file: TemporaryStorePath
    ) throws -> (ProviderTripViewModel, ProviderDevice, FaultInjectingHTTPClient) {
        let (inner, server) = backend.client("p1", .provider)
        let http = FaultInjectingHTTPClient(wrapping: inner) { _, _ in .none }
        let device = try ProviderDevice(
            path: file.path, client: http, server: server, clock: backend.clock, ids: SequentialIDs("c"))
        return (ProviderTripViewModel(engine: device.engine), device, http)
    }

    @Test func aTapMovesTheScreenOnAtOnceAndTheAnswerClearsTheBadge() async throws {
        let backend = TestBackend()
        let trip = try await backend.assignedRide()
        let file = TemporaryStorePath()
        defer { file.remove() }
        let (screen, device, http) = try makeSUT(backend, file: file)
        http.isOffline = true
        await screen.start()
        screen.receive(trip)
        #expect(screen.state.nextStep == .driverArrived)

        screen.reportStep()
        #expect(screen.state.trip?.displayedStatus == "driverArrived")
        #expect(screen.state.nextStep == .onTrip)
        #expect(screen.state.isSyncing)
        screen.reportStep()
        #expect(screen.state.trip?.displayedStatus == "onTrip")
        #expect(screen.state.nextStep == .completed)

        http.isOffline = false
        try await device.syncUntilEmpty(backend.clock)
        try await eventually("the answers") { !screen.state.isSyncing }
        #expect(screen.state.trip?.server.status == "onTrip")
        #expect(screen.state.notice == nil)
        screen.stop()
        await device.kill()
    }

    /// The courier's "Delivered" tap names the proof it captured; the step waiting to go carries it.
    @Test func aStepTappedWithAProofCarriesTheProofsID() async throws {
        let backend = TestBackend()
        let trip = try await backend.assignedRide()
        let file = TemporaryStorePath()
        defer { file.remove() }
        let (screen, device, http) = try makeSUT(backend, file: file)
        http.isOffline = true
        screen.receive(trip)
        screen.reportStep(.driverArrived)
        screen.reportStep(.completed, proofId: "proof-1")
        let pending = try device.engine.outbox.pending()
        #expect(pending.map(\.proofId) == [nil, "proof-1"])
        await device.kill()
    }

    /// After a kill, the screen comes back from the file with the unsent step still shown.
    @Test func aRelaunchShowsTheUnsentStep() async throws {
        let backend = TestBackend()
        let trip = try await backend.assignedRide()
        let file = TemporaryStorePath()
        defer { file.remove() }
        var (screen, device, http) = try makeSUT(backend, file: file)
        http.isOffline = true
        screen.receive(trip)
        screen.reportStep()
        await device.kill()

        (screen, device, http) = try makeSUT(backend, file: file)
        http.isOffline = true
        screen.load()
        #expect(screen.state.trip?.displayedStatus == "driverArrived")
        #expect(screen.state.trip?.pendingSteps == 1)
        await device.kill()
    }

    @Test(
        arguments: [
            ("ride", "driverAssigned", nil, ProviderStep.driverArrived),
            ("ride", "driverArrived", nil, .onTrip),
            ("ride", "onTrip", nil, .completed),
            ("delivery", "picking", "preparing", nil),
            ("delivery", "picking", "ready", .onTheWay),
            ("delivery", "onTheWay", nil, .arriving),
            ("delivery", "arriving", nil, .delivered),
            ("delivery", "delivered", nil, nil),
            ("ride", "cancelled", nil, nil),
        ] as [(String, String, String?, ProviderStep?)])
    func theNextStepFollowsTheTripsKindAndStatus(
        kind: String, status: String, merchantStep: String?, next: ProviderStep?
    ) {
        #expect(ProviderStep.next(afterStatus: status, kind: kind, merchantStep: merchantStep) == next)
    }
}
