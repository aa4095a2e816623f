import EnRouteModels
public import Foundation
import Synchronization

/// `RideTracking` over the real API: the tracking screen driven by `TripAPI` and a `LiveTripChannel`.
///
/// An update's ETA is the newest one from the trip's versions and the driver's fixes (`LiveETA`), and its `sequence`
/// is `LiveETA.sequence`: it grows with a newer version or a newer fix, so a fix's ETA is shown without a version
/// change. The stream ends when the driver arrives or the trip ends without a pickup.
public final class LiveRideService: RideTracking {
    private let api: any TripAPI
    private let channel: any LiveTripChannel
    private let clock: any Clock<Duration>
    private let outcomes = Mutex<[String: RideOutcome]>([:])

    /// A service over `api` and `channel`; `clock` times reconnects.
    public init(api: any TripAPI, channel: any LiveTripChannel, clock: any Clock<Duration>) {
        self.api = api
        self.channel = channel
        self.clock = clock
    }

    /// The driver's positions while assigned, one per fix or trip version; ends at pickup or when the trip ends.
    public func driverUpdates(rideID: String) -> AsyncStream<DriverUpdate> {
        let (stream, continuation) = AsyncStream.makeStream(of: DriverUpdate.self, bufferingPolicy: .bufferingNewest(1))
        let loop = LiveTripLoop(api: api, channel: channel, clock: clock)
        let producer = Task { [self] in
            var trip: Trip?
            var position: Coordinate?
            var lastSeq = Int64.min
            var eta = LiveETA()
            await loop.run(tripID: rideID) { event in
                switch event {
                case .tripUpdated(let update):
                    guard update.version > trip?.version ?? .min else { return true }
                    trip = update
                    eta.apply(update)
                case .driverMoved(let location):
                    guard location.seq > lastSeq else { return true }
                    lastSeq = location.seq
                    position = location.coordinate
                    eta.apply(location)
                }
                guard let trip else { return true }
                if let outcome = Self.outcome(of: trip.state) {
                    outcomes.withLock { $0[rideID] = outcome }
                    return false
                }
                if trip.state == .driverAssigned, let position {
                    continuation.yield(DriverUpdate(sequence: eta.sequence, position: position,
                                                    metersAway: Int(position.distance(to: trip.pickup).rounded()),
                                                    reportedETA: eta.seconds.map { .seconds($0) }))
                }
                return true
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in producer.cancel() }
        return stream
    }

    /// The newest ETA the server sent, with a trip version or a fix, as of the update.
    public func eta(for update: DriverUpdate) async throws -> Duration {
        guard let eta = update.reportedETA else { throw RideTrackingError.noETA }
        return eta
    }

    /// A straight line from pickup to drop-off: the API serves no route geometry yet.
    public func routeData(rideID: String) async throws -> Data {
        guard let trip = try await api.activeTrip(), trip.id == rideID else { throw RideTrackingError.rideNotActive }
        return try RouteDecoder.encode([trip.pickup, trip.dropoff])
    }

    /// `POST /v1/trips/{id}/cancel`; throws when the server refuses (409 once it is too late).
    public func cancelRide(rideID: String) async throws {
        _ = try await api.cancel(tripID: rideID)
    }

    /// How the ride's update stream ended, from the last trip state it saw.
    public func outcome(rideID: String) async -> RideOutcome {
        outcomes.withLock { $0[rideID] } ?? .driverArrived
    }

    /// How a trip state ends the way to the pickup; nil while the driver is still searched for or coming.
    static func outcome(of state: TripState) -> RideOutcome? {
        switch state {
        case .searching, .driverAssigned: nil
        case .driverArrived, .onTrip, .completed: .driverArrived
        case .cancelled, .noDriversFound: .cancelled
        }
    }
}
