import Foundation
public import EnRouteModels
public import Observation

/// The ride tracking screen: driver on the way, ETA, arriving banner, cancel.
@MainActor @Observable
public final class RideTrackingViewModel {
    /// Where the ride stands for the rider.
    public enum Status: Equatable, Sendable {
        case findingDriver
        case enRoute
        case arrived
        case cancelling
        case cancelled
    }

    /// The ride being tracked.
    public let ride: Ride
    /// Where the ride stands.
    public private(set) var status: Status = .findingDriver
    /// The route polyline; empty until loaded, and when it fails.
    public private(set) var route: [Coordinate] = []
    /// The driver's latest position.
    public private(set) var driverPosition: Coordinate?
    /// The driver's latest distance to the pickup.
    public private(set) var metersAway: Int?
    /// The newest ETA.
    public private(set) var eta: Duration?
    /// Why the last cancel failed, or nil.
    public private(set) var cancelError: String?

    /// Shown once per ride, the first time a current ETA drops under two minutes.
    /// A later bump (a missed turn) doesn't hide it: it's a heads-up, not a live value.
    public var showsArrivingBanner: Bool { hasCrossedArrivalThreshold && status == .enRoute }

    /// True while cancelling makes sense and no cancel is in flight.
    public var canCancel: Bool { status == .findingDriver || status == .enRoute }

    /// A view model for `ride`; `logger` hears about failures the screen survives (the screen writes
    /// `RideTrackingViewModel(ride:service:)`, which logs to the system).
    public init(ride: Ride, service: any RideTracking, logger: any RideLogger = SystemRideLogger()) {
        self.ride = ride
        self.service = service
        self.logger = logger
    }

    /// Runs until the driver arrives, the ride is cancelled, or the caller's task is cancelled.
    public func track() async {
        let tracking = Task { await runTracking() }  // inherits the main actor
        self.tracking = tracking
        await withTaskCancellationHandler {
            await tracking.value
        } onCancel: {
            tracking.cancel()  // the view's .task went away
        }
    }

    /// Cancels the ride; tracking stops only once the server agrees, and a failed cancel keeps tracking.
    public func cancelRide() async {
        guard canCancel else { return }  // one request at a time
        let previous = status
        status = .cancelling
        cancelError = nil
        do {
            try await service.cancelRide(rideID: ride.id)
            tracking?.cancel()  // stop only once the server agrees
            status = .cancelled
        } catch {
            status = previous  // the driver is still coming: keep tracking
            cancelError = "Couldn't cancel the ride. Try again."
        }
    }

    /// Loads the route; the map still works without it.
    public func loadRoute() async {
        do {
            let data = try await service.routeData(rideID: ride.id)
            route = try await Self.decodeRoute(data)
        } catch is CancellationError {
            // left the screen
        } catch {
            logger.warning("Route for ride \(ride.id) failed: \(error)")
        }
    }

    @ObservationIgnored private let service: any RideTracking
    @ObservationIgnored private let logger: any RideLogger
    @ObservationIgnored private var tracking: Task<Void, Never>?
    @ObservationIgnored private var etaSequence = 0  // the newest update an ETA was applied for
    private var hasCrossedArrivalThreshold = false

    private static let arrivalThreshold: Duration = .seconds(120)

    private func runTracking() async {
        await withDiscardingTaskGroup { group in
            for await update in service.driverUpdates(rideID: ride.id) {
                if status == .findingDriver { status = .enRoute }
                driverPosition = update.position
                metersAway = update.metersAway
                group.addTask { [service] in
                    guard let eta = try? await service.eta(for: update) else { return }
                    await self.apply(eta, from: update.sequence)
                }
            }
            // The stream ends in two ways: it finished by itself (usually the driver arrived), or we were cancelled.
            if !Task.isCancelled {
                let outcome = await service.outcome(rideID: ride.id)
                if !Task.isCancelled, status != .cancelled {
                    status = outcome == .cancelled ? .cancelled : .arrived
                }
            }
            group.cancelAll()  // late ETAs are meaningless now
        }
    }

    /// Results arrive in any order. Apply one only if it is newer than what's on screen.
    private func apply(_ eta: Duration, from sequence: Int) {
        guard status == .enRoute, sequence > etaSequence else { return }
        etaSequence = sequence
        self.eta = eta
        if eta < Self.arrivalThreshold {
            hasCrossedArrivalThreshold = true
        }
    }

    /// Off the main actor: a long route must not stall the map.
    @concurrent
    private nonisolated static func decodeRoute(_ data: Data) async throws -> [Coordinate] {
        try RouteDecoder.decode(data)
    }
}
