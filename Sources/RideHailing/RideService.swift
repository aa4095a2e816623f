public import Foundation
public import EnRouteModels

/// Seed 003's scripted service: walks the driver along waypoints, one per `interval`, for demos and previews.
public struct RideService: RideTracking {
    /// One scripted stop on the driver's way.
    public struct Waypoint: Sendable, Equatable {
        /// Where the driver is at this stop.
        public var position: Coordinate
        /// The distance left to the pickup.
        public var metersAway: Int
        /// A stop at `position`, `metersAway` from the pickup.
        public init(position: Coordinate, metersAway: Int) { self.position = position; self.metersAway = metersAway }
    }

    /// Average city speed used for the scripted ETA, in metres per second.
    static let metresPerSecond = 8

    private let clock: any Clock<Duration>
    private let waypoints: [Waypoint]
    private let interval: Duration

    /// A service that sends `waypoints` one per `interval` on `clock`.
    public init(clock: any Clock<Duration>, waypoints: [Waypoint], interval: Duration = .seconds(1)) {
        self.clock = clock
        self.waypoints = waypoints
        self.interval = interval
    }

    /// Pushes the driver's position once per interval until they reach the pickup; stops when the consumer goes away.
    public func driverUpdates(rideID: String) -> AsyncStream<DriverUpdate> {
        let (stream, continuation) = AsyncStream.makeStream(of: DriverUpdate.self)
        let producer = Task { [clock, waypoints, interval] in
            for (index, waypoint) in waypoints.enumerated() {
                do { try await clock.sleep(for: interval) } catch { return }   // cancelled: stop producing
                continuation.yield(DriverUpdate(sequence: index + 1, position: waypoint.position, metersAway: waypoint.metersAway))
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in producer.cancel() }
        return stream
    }

    /// Distance over an average city speed.
    public func eta(for update: DriverUpdate) async throws -> Duration {
        .seconds(update.metersAway / Self.metresPerSecond)
    }

    /// The waypoints as the route.
    public func routeData(rideID: String) async throws -> Data {
        try RouteDecoder.encode(waypoints.map(\.position))
    }

    /// Always agrees.
    public func cancelRide(rideID: String) async throws {}
}
