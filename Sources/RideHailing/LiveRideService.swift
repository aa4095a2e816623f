import HTTPTransport
import EnRouteModels
public import Foundation

/// `RideTracking` over the real API: the ride tracking screen's tracking screen following the shared `LiveTripFeed`.
///
/// An update's ETA is the newest one from the trip's versions and the driver's fixes (`LiveETA`), and its `sequence`
/// is `LiveETA.sequence`: it grows with a newer version or a newer fix, so a fix's ETA is shown without a version
/// change. The stream ends when the driver arrives or the trip ends without a pickup.
public final class LiveRideService: RideTracking {
    private let feed: LiveTripFeed
    private let outcomes = Locked<[String: RideOutcome]>([:])

    /// A service following `feed`, the same one the request flow (`TripViewModel`) uses, and calling its `api`.
    public init(feed: LiveTripFeed) {
        self.feed = feed
    }

    /// The driver's positions while assigned, one per newer fix or trip version; ends at pickup or when the trip ends.
    public func driverUpdates(rideID: String) -> AsyncStream<DriverUpdate> {
        let (stream, continuation) = AsyncStream.makeStream(of: DriverUpdate.self, bufferingPolicy: .bufferingNewest(1))
        let producer = Task { @MainActor [feed, self] in
            await feed.follow(tripID: rideID) { state in
                guard let trip = state.trip, trip.id == rideID else { return true }
                if let outcome = Self.outcome(of: trip.state) {
                    self.outcomes.withLock { $0[rideID] = outcome }
                    return false
                }
                if trip.state == .driverAssigned, let position = state.driverLocation?.coordinate {
                    continuation.yield(
                        DriverUpdate(
                            sequence: state.eta.sequence, position: position,
                            metersAway: Int(position.distance(to: trip.pickup).rounded()),
                            reportedETA: state.eta.seconds.map { .seconds($0) }))
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

    /// The ride's remaining road route from the server (`GET /v1/trips/{id}/route`), as the ride tracking screen's JSON
    /// array of `{lat, lng}`. A server without a road network (503) gets the straight line from pickup to drop-off
    /// instead, so the map still shows where the ride goes.
    public func routeData(rideID: String) async throws -> Data {
        do {
            return try RouteDecoder.encode(try await feed.api.route(tripID: rideID))
        } catch let error as APIError where error.status == 503 {
            guard let trip = try await feed.api.activeTrip(), trip.id == rideID else {
                throw RideTrackingError.rideNotActive
            }
            return try RouteDecoder.encode([trip.pickup, trip.dropoff])
        }
    }

    /// `POST /v1/trips/{id}/cancel`; the answer goes through the feed, so every screen sees the ride end. Throws when
    /// the server refuses (409 once it is too late).
    public func cancelRide(rideID: String) async throws {
        let trip = try await feed.api.cancel(tripID: rideID)
        await feed.apply(trip)
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
