import HTTPTransport
public import Foundation
public import EnRouteModels

/// What the clients saw during a run, raw: the report's metrics are computed from these alone.
public struct SimulationObservations: Sendable, Equatable {
    /// A delivered order: the last arrival window its customer was shown, the first one shown once on the way, how
    /// many seconds each window was on screen while on the way, when the courier reached the door and when the
    /// customer saw it delivered.
    public struct OrderArrival: Sendable, Equatable {
        public var lastWindow: ClosedRange<Date>?
        public var firstOnTheWayWindow: ClosedRange<Date>?
        public var deliveredAt: Date
        /// When the courier reached the door (the simulation's own truth); nil when unknown.
        public var arrivedAt: Date?
        /// Seconds on screen of each window shown while the order was on the way.
        public var onTheWayWindows: [ClosedRange<Date>: Int]
        public init(
            lastWindow: ClosedRange<Date>?, firstOnTheWayWindow: ClosedRange<Date>?, deliveredAt: Date,
            arrivedAt: Date? = nil,
            onTheWayWindows: [ClosedRange<Date>: Int] = [:]
        ) {
            self.lastWindow = lastWindow; self.firstOnTheWayWindow = firstOnTheWayWindow; self.deliveredAt = deliveredAt
            self.arrivedAt = arrivedAt; self.onTheWayWindows = onTheWayWindows
        }
        /// The moment the order arrived: at the door when known, else when the customer saw it delivered.
        public var arrival: Date { arrivedAt ?? deliveredAt }
    }
    /// A completed ride: the drop-off time the rider was promised when the ride started, and the real one.
    public struct RideArrival: Sendable, Equatable {
        public var promised: Date?
        public var arrivedAt: Date
        public init(promised: Date?, arrivedAt: Date) { self.promised = promised; self.arrivedAt = arrivedAt }
    }
    /// One trip's provider as that provider saw it: when the request was created (the trip's own creation time, as
    /// the server stamped it), when the provider was assigned (its accept answered, or the trip reached it), when it
    /// reached the pickup (nil: it never did) and the metres it drove in between.
    public struct Assignment: Sendable, Equatable {
        public var requestedAt: Date
        public var assignedAt: Date
        public var atPickup: Date?
        public var approachMetres: Double
        public init(requestedAt: Date, assignedAt: Date, atPickup: Date? = nil, approachMetres: Double = 0) {
            self.requestedAt = requestedAt; self.assignedAt = assignedAt; self.atPickup = atPickup
            self.approachMetres = approachMetres
        }
    }
    /// A ride booked ahead, as its rider saw it: when the driver was due at the pickup, when the search began (nil:
    /// not seen begun) and the state it ended in (nil: still under way when the run ended).
    public struct BookedRide: Sendable, Equatable {
        public var scheduledFor: Date
        public var matchingStartedAt: Date?
        public var ended: TripState?
        public init(scheduledFor: Date, matchingStartedAt: Date? = nil, ended: TripState? = nil) {
            self.scheduledFor = scheduledFor; self.matchingStartedAt = matchingStartedAt; self.ended = ended
        }
    }
    /// An order a courier took through a stacked offer (one made while it carried another order, with `stops`).
    public struct StackedOffer: Sendable, Equatable {
        /// The offer's `addedSeconds`: the most it adds to a carried order's hand-over, as dispatch planned it.
        public var addedSeconds: Int?
        /// The orders the courier carried when it took this one (the offer's other stops).
        public var carried: [String]
        public init(addedSeconds: Int?, carried: [String] = []) {
            self.addedSeconds = addedSeconds; self.carried = carried
        }
    }
    /// The estimate a rider was shown, when it asked, for the product it went on to confirm.
    public struct EstimateShown: Sendable, Equatable {
        /// Simulated seconds since the run's start.
        public var second: Double
        /// The quote behind it (nil from a server without quotes).
        public var quoteId: String?
        public var fare: Money
        /// Priced for a ride booked ahead, which the busy-time multiplier never applies to.
        public var booked: Bool
        public init(second: Double, quoteId: String?, fare: Money, booked: Bool = false) {
            self.second = second; self.quoteId = quoteId; self.fare = fare; self.booked = booked
        }
    }
    /// The stages polls are counted by.
    public enum PollStage: String, Sendable, CaseIterable, Codable { case picking, onTheWay, background }

    public var ridesRequested = 0
    public var ridesCompleted = 0
    public var ridesNoProvider = 0
    public var ridesCancelled = 0
    public var ridesRefusedPayment = 0
    public var challengesAnswered = 0
    public var tips = 0
    public var ratings = 0
    public var ordersPlaced = 0
    public var ordersDelivered = 0
    public var ordersCancelled = 0
    /// Seconds from each ride request to its driver, for rides asked for now (a booked ride's match is late on
    /// purpose).
    public var matchSeconds: [Double] = []
    public var orderArrivals: [OrderArrival] = []
    public var rideArrivals: [RideArrival] = []
    /// Age in seconds of the fix behind every pin drawn as live.
    public var livePinAges: [Double] = []
    /// Age in seconds of the snapshot behind every tracking screen drawn.
    public var snapshotAgesShown: [Double] = []
    /// Snapshots that arrived older than one the customer already had (the store keeps the newer).
    public var outOfOrderDrops = 0
    /// Live Activity renders, and those past their stale date.
    public var liveActivityRenders = 0
    public var liveActivityStale = 0
    /// Tracking polls and order-minutes, by stage.
    public var polls: [PollStage: Int] = [:]
    public var orderMinutes: [PollStage: Double] = [:]
    /// The change ids the server acknowledged to each provider's outbox, by trip.
    public var acknowledgedSteps: [String: [String]] = [:]
    /// Steps still in an outbox when the run ended.
    public var unsentSteps = 0
    public var offersReceived = 0
    public var offersAccepted = 0
    public var offersDeclined = 0
    public var offersExpired = 0
    /// Fixes put in the point buffers, and fixes the server acknowledged.
    public var fixesRecorded = 0
    public var fixesAccepted = 0
    public var uploadFailures = 0
    /// When each trip's provider reached its drop-off, by trip id.
    public var doorArrivals: [String: Date] = [:]
    /// Trips that should be paid for (completed rides, delivered orders).
    public var paidTripIDs: [String] = []
    /// Every trip the run created.
    public var tripIDs: [String] = []
    /// Each trip's first provider assignment, by trip id.
    public var assignments: [String: Assignment] = [:]
    /// The rides booked ahead, by trip id.
    public var bookedRides: [String: BookedRide] = [:]
    /// The delivery orders among `tripIDs`.
    public var orderIDs: [String] = []
    /// Orders accepted through a stacked offer, by trip id.
    public var stackedOffers: [String: StackedOffer] = [:]
    /// The `stopsBefore` values each order's tracking showed before it ended, in order, a repeat kept once (nil not
    /// listed), by trip id.
    public var stopsBeforeSeen: [String: [Int]] = [:]
    /// Each rider's estimate, in the order shown.
    public var estimatesShown: [EstimateShown] = []

    public init() {}
}

/// The run's observations behind a lock, written by every simulated party.
public final class ObservationLog: Sendable {
    private let state = Locked(SimulationObservations())
    /// An empty log.
    public init() {}
    /// Changes the observations under the lock.
    public func record(_ change: (inout SimulationObservations) -> Void) { state.withLock { change(&$0) } }
    /// A copy of everything so far.
    public var snapshot: SimulationObservations { state.withLock { $0 } }
}
