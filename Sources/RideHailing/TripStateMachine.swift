public import EnRouteModels

/// Keeps the newest version of the rider's trip and flags state jumps the diagram does not allow.
public struct TripStateMachine: Sendable {
    /// What `apply(_:)` did with an update.
    public enum Outcome: Equatable, Sendable {
        /// The update became the current trip.
        case applied
        /// The update was older than, or the same version as, the current trip.
        case dropped
        /// Accepted although the table does not allow it: events were missed, or there is a bug.
        case jumped(from: TripState, to: TripState)
    }

    /// The transitions the rider's diagram allows; staying in the same state is always allowed.
    public static let allowed: [TripState: Set<TripState>] = [
        .searching: [.driverAssigned, .noDriversFound, .cancelled],
        .driverAssigned: [.driverArrived, .searching, .cancelled],
        .driverArrived: [.onTrip, .cancelled],
        .onTrip: [.completed],
        .completed: [], .cancelled: [], .noDriversFound: [],
    ]

    /// The newest trip seen so far.
    public private(set) var trip: Trip?
    private let logger: any RideLogger

    /// A machine with no trip yet that reports jumps to `logger` (the rider app's `TripStateMachine()` logs to the
    /// system).
    public init(logger: any RideLogger = SystemRideLogger()) {
        self.logger = logger
    }

    /// Applies a server update: older or duplicate versions are dropped, jumps are accepted and logged.
    @discardableResult
    public mutating func apply(_ update: Trip) -> Outcome {
        // A different id is a new trip, so its versions do not compare with the old one's.
        guard let current = trip, current.id == update.id else {
            trip = update
            return .applied
        }
        guard update.version > current.version else { return .dropped }
        trip = update
        if update.state == current.state || Self.allowed[current.state, default: []].contains(update.state) {
            return .applied
        }
        // The server is the truth, so the update stands; but a jump can also point to a bug.
        logger.warning(
            "Trip \(update.id) jumped \(current.state.rawValue) -> \(update.state.rawValue) at version "
                + "\(update.version)"
        )
        return .jumped(from: current.state, to: update.state)
    }
}
