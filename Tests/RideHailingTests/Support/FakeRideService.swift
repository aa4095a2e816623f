import Foundation
import Synchronization
import Testing
import EnRouteModels
import TestSupport
@testable import RideHailing

/// A stream the test drives by hand, and ETAs scripted per update with delays on a manual clock.
/// An unscripted ETA or cancel fails the test.
final class FakeRideService: RideTracking {
    let updates: AsyncStream<DriverUpdate>
    let driver: AsyncStream<DriverUpdate>.Continuation
    let clock: ManualClock
    let etas: [Int: (eta: Duration, delay: Duration)]
    let cancelResult: Result<Void, FakeError>?
    let route: Data
    let cancelCalls = Mutex(0)
    let etaAnswers = Mutex(0)
    let streamTerminated = Mutex(false)

    init(
        clock: ManualClock = ManualClock(), etas: [Int: (eta: Duration, delay: Duration)] = [:],
        cancelResult: Result<Void, FakeError>? = nil, route: Data = Data("[]".utf8)
    ) {
        (updates, driver) = AsyncStream.makeStream(of: DriverUpdate.self)
        self.clock = clock
        self.etas = etas
        self.cancelResult = cancelResult
        self.route = route
        driver.onTermination = { [weak self] _ in self?.streamTerminated.withLock { $0 = true } }
    }

    func driverUpdates(rideID: String) -> AsyncStream<DriverUpdate> { updates }

    func eta(for update: DriverUpdate) async throws -> Duration {
        guard let scripted = etas[update.sequence] else {
            Issue.record("unexpected ETA request for update \(update.sequence)")
            throw FakeError(reason: "unexpected eta")
        }
        try await clock.sleep(for: scripted.delay)
        etaAnswers.withLock { $0 += 1 }
        return scripted.eta
    }

    func routeData(rideID: String) async throws -> Data { route }

    func cancelRide(rideID: String) async throws {
        cancelCalls.withLock { $0 += 1 }
        guard let cancelResult else {
            Issue.record("unexpected cancel")
            throw FakeError(reason: "unexpected cancel")
        }
        try cancelResult.get()
    }

    func send(_ sequence: Int) {
        driver.yield(DriverUpdate(sequence: sequence, position: Coordinate(lat: 52.52, lng: 13.40), metersAway: 1000))
    }
}
