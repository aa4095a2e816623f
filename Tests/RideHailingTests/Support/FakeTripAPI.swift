import Foundation
import Synchronization
import Testing
import EnRouteModels
@testable import RideHailing

/// A `TripAPI` that fails the test on any call it was not told to expect.
final class FakeTripAPI: TripAPI {
    struct Handlers {
        var estimate: (@Sendable (Coordinate, Coordinate) throws -> [Estimate])?
        var requestTrip: (@Sendable (_ call: Int, TripRequest, UUID) throws -> Trip)?
        var activeTrip: (@Sendable (_ call: Int) throws -> Trip?)?
        var cancel: (@Sendable (String) throws -> Trip)?
        var nearbyDrivers: (@Sendable (Coordinate) throws -> [Coordinate])?
        var route: (@Sendable (String) throws -> [Coordinate])?
    }

    let log: CallLog
    private let handlers = Mutex(Handlers())
    private let keys = Mutex<[UUID]>([])

    init(log: CallLog = CallLog()) { self.log = log }

    /// Tells the fake what to answer; unset calls fail the test.
    func expect(_ change: (inout Handlers) -> Void) { handlers.withLock { change(&$0) } }

    /// The idempotency keys of every `requestTrip` call, in order.
    var requestKeys: [UUID] { keys.withLock { $0 } }

    func estimate(pickup: Coordinate, dropoff: Coordinate) async throws -> [Estimate] {
        log.record("estimate")
        return try handler(\.estimate, "estimate")(pickup, dropoff)
    }

    func requestTrip(_ request: TripRequest, idempotencyKey: UUID) async throws -> Trip {
        log.record("requestTrip")
        let call = keys.withLock {
            $0.append(idempotencyKey); return $0.count
        }
        return try handler(\.requestTrip, "requestTrip")(call, request, idempotencyKey)
    }

    func activeTrip() async throws -> Trip? {
        log.record("activeTrip")
        return try handler(\.activeTrip, "activeTrip")(log.count("activeTrip"))
    }

    func cancel(tripID: String) async throws -> Trip {
        log.record("cancel(\(tripID))")
        return try handler(\.cancel, "cancel")(tripID)
    }

    func nearbyDrivers(around point: Coordinate) async throws -> [Coordinate] {
        log.record("nearbyDrivers")
        return try handler(\.nearbyDrivers, "nearbyDrivers")(point)
    }

    func route(tripID: String) async throws -> [Coordinate] {
        log.record("route(\(tripID))")
        return try handler(\.route, "route")(tripID)
    }

    private func handler<H>(_ path: KeyPath<Handlers, H?>, _ name: String) throws -> H {
        let current = handlers.withLock { $0 }
        guard let handler = current[keyPath: path] else {
            Issue.record("unexpected call: \(name)")
            throw FakeError(reason: "unexpected \(name)")
        }
        return handler
    }
}
