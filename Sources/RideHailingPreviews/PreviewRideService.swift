public import Foundation
public import EnRouteModels
public import RideHailing

/// A fake `RideTracking` for SwiftUI previews and demos: walks the driver along scripted waypoints, one per `interval`.
///
/// The ride tracking screen's scripted `RideService`; it talks to no server, so it lives in this previews-only module,
/// never in an app's production wiring (that is `LiveRideService`).
public struct PreviewRideService: RideTracking {
    /// One scripted stop on the driver's way.
    public struct Waypoint: Sendable, Equatable {
        /// Where the driver is at this stop.
        public var position: Coordinate
        /// The distance left to the pickup.
        public var metersAway: Int
        /// A stop at `position`, `metersAway` from the pickup.
        public init(position: Coordinate, metersAway: Int) { self.position = position; self.metersAway = metersAway }
    }

    /// A driver coming down Unter den Linden to a pickup by the Brandenburg Gate (the ride tracking screen's city).
    public static let demoWaypoints: [Waypoint] = [
        Waypoint(position: Coordinate(lat: 52.5170, lng: 13.3990), metersAway: 1600),
        Waypoint(position: Coordinate(lat: 52.5168, lng: 13.3930), metersAway: 1200),
        Waypoint(position: Coordinate(lat: 52.5166, lng: 13.3870), metersAway: 800),
        Waypoint(position: Coordinate(lat: 52.5164, lng: 13.3810), metersAway: 400),
        Waypoint(position: Coordinate(lat: 52.5163, lng: 13.3777), metersAway: 0),
    ]

    /// Average city speed used for the scripted ETA, in metres per second.
    static let metresPerSecond = 8

    private let clock: any Clock<Duration>
    private let waypoints: [Waypoint]
    private let interval: Duration

    /// A service that sends `waypoints` one per `interval` on `clock`; `PreviewRideService()` plays the demo route.
    public init(
        clock: any Clock<Duration> = ContinuousClock(), waypoints: [Waypoint] = demoWaypoints,
        interval: Duration = .seconds(1)
    ) {
        self.clock = clock
        self.waypoints = waypoints
        self.interval = interval
    }

    /// Pushes the driver's position once per interval until they reach the pickup; stops when the consumer goes away.
    public func driverUpdates(rideID: String) -> AsyncStream<DriverUpdate> {
        let (stream, continuation) = AsyncStream.makeStream(of: DriverUpdate.self)
        let producer = Task { [clock, waypoints, interval] in
            for (index, waypoint) in waypoints.enumerated() {
                do { try await clock.sleep(for: interval) } catch { return }  // cancelled: stop producing
                continuation.yield(
                    DriverUpdate(sequence: index + 1, position: waypoint.position, metersAway: waypoint.metersAway))
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
