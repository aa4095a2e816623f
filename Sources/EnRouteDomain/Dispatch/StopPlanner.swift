public import Foundation
public import EnRouteModels

/// Plans a courier's route over the orders it carries: each pickup before its drop-off, a wait at a merchant until the
/// order is ready, a fixed time at each stop, and at most `capacity` orders at once.
///
/// Pure: travel times come from the `seconds` function the caller measured (one road table over the points).
public struct StopPlanner: Sendable, Equatable {
    /// One order on the route.
    public struct Order: Sendable, Equatable {
        public let tripId: String
        public let pickup: Coordinate
        public let dropoff: Coordinate
        /// Seconds from now until the merchant has it ready (0 when it is).
        public let readyIn: Double
        /// The courier has collected it: only its drop-off is left.
        public let pickedUp: Bool

        public init(tripId: String, pickup: Coordinate, dropoff: Coordinate, readyIn: Double, pickedUp: Bool) {
            self.tripId = tripId; self.pickup = pickup; self.dropoff = dropoff; self.readyIn = readyIn
            self.pickedUp = pickedUp
        }
    }

    /// A route, with when each order is handed over.
    public struct Plan: Sendable, Equatable {
        public let stops: [PlannedStop]
        /// Seconds from now until each order is handed over.
        public let arrivals: [String: Double]
        /// The most seconds the route adds to the hand-over of an order the courier carried before.
        public let addedSeconds: Double
    }

    /// Orders a courier carries at once.
    public var capacity: Int
    /// The most seconds a second order may add to the first customer's arrival, and the most its own customer may wait
    /// beyond what a courier of its own would take.
    public var limit: Double
    /// Seconds spent at each stop (parking, the handover).
    public var stopSeconds: Double
    /// The time at a stop that plans and arrival estimates count by default.
    public static let stopSeconds: Double = 90

    public init(capacity: Int = 2, limit: Double = 300, stopSeconds: Double = Self.stopSeconds) {
        self.capacity = capacity; self.limit = limit; self.stopSeconds = stopSeconds
    }

    typealias Travel = (Coordinate, Coordinate) -> Double

    /// The stops of `orders` in the order given, each with its road seconds from the one before, and the hand-over
    /// times; from the courier at `start`.
    func walk(
        _ order: [(trip: String, stop: RouteStop)], from start: Coordinate, orders: [String: Order],
        seconds: Travel
    ) -> Plan {
        var clock = 0.0
        var here = start
        var stops: [PlannedStop] = []
        var arrivals: [String: Double] = [:]
        for (trip, kind) in order {
            guard let o = orders[trip] else { continue }
            let at = kind == .pickup ? o.pickup : o.dropoff
            let leg = seconds(here, at)
            clock += leg
            if kind == .pickup { clock = max(clock, o.readyIn) }
            if kind == .dropoff { arrivals[trip] = clock }
            clock += stopSeconds
            stops.append(PlannedStop(tripId: trip, stop: kind, at: at, secondsFromPrevious: leg))
            here = at
        }
        return Plan(stops: stops, arrivals: arrivals, addedSeconds: 0)
    }

    /// The courier's route as it stands: `current` (the stops left, when several orders are carried already), else
    /// each carried order's pickup (unless collected) then its drop-off.
    func currentOrder(_ current: [PlannedStop], carrying: [Order]) -> [(trip: String, stop: RouteStop)] {
        if !current.isEmpty { return current.map { ($0.tripId, $0.stop) } }
        return carrying.flatMap { o in (o.pickedUp ? [] : [(o.tripId, RouteStop.pickup)]) + [(o.tripId, .dropoff)] }
    }

    /// The best route adding `new` to a courier at `courier` carrying `carrying` (with `current` stops left, or none
    /// when carrying a single order), by the least sum of hand-over times; nil when that exceeds `capacity`, or every
    /// way of fitting it in adds more than `limit` to an order carried, or hands `new` over more than `limit` after
    /// `freshArrival` (a courier of its own).
    public func insert(
        _ new: Order, into current: [PlannedStop], carrying: [Order], from courier: Coordinate,
        freshArrival: Double?, seconds: (Coordinate, Coordinate) -> Double
    ) -> Plan? {
        guard carrying.count + 1 <= capacity, !new.pickedUp else { return nil }
        var orders = Dictionary(carrying.map { ($0.tripId, $0) }, uniquingKeysWith: { a, _ in a })
        let base = currentOrder(current, carrying: carrying)
        let before = walk(base, from: courier, orders: orders, seconds: seconds).arrivals
        orders[new.tripId] = new
        var best: (plan: Plan, total: Double)?
        // Latest insertions first: on a tie the stops already planned keep their places.
        for i in (0...base.count).reversed() {
            for j in ((i + 1)...(base.count + 1)).reversed() {
                var order = base
                order.insert((new.tripId, .pickup), at: i)
                order.insert((new.tripId, .dropoff), at: j)
                let plan = walk(order, from: courier, orders: orders, seconds: seconds)
                guard let arrival = plan.arrivals[new.tripId] else { continue }
                if let fresh = freshArrival, arrival > fresh + limit { continue }
                let added = before.map { trip, was in (plan.arrivals[trip] ?? .infinity) - was }.max() ?? 0
                guard added <= limit else { continue }
                let total = plan.arrivals.values.reduce(0, +)
                if best == nil || total < best!.total {
                    best = (Plan(stops: plan.stops, arrivals: plan.arrivals, addedSeconds: max(0, added)), total)
                }
            }
        }
        return best?.plan
    }
}

/// What a trip's planned stops say: which are left, how many come before the customer's, and the route to drive.
extension TripRecord {
    /// The order's next own stop: the merchant until collected, then the customer.
    var nextOwnStop: RouteStop {
        switch status {
        case .delivery(.placed), .delivery(.picking): .pickup
        default: .dropoff
        }
    }

    /// While a courier has the order: the stops for other orders before its hand-over; nil before a courier has it and
    /// after it ended.
    public var stopsBefore: Int? {
        guard status.isActive, providerId != nil else { return nil }
        guard let stops, let own = stops.firstIndex(where: { $0.tripId == id && $0.stop == .dropoff }) else { return 0 }
        return stops[..<own].count { $0.tripId != id }
    }

    /// The route to the order's next own stop when other orders' stops come first: the first stop to drive to, and
    /// the planned seconds from there to the order's own stop (stops included); nil when the next stop is its own.
    public var stackedApproach: (first: Coordinate, after: Double, stops: Int)? {
        guard let stops, let own = stops.firstIndex(where: { $0.tripId == id && $0.stop == nextOwnStop }), own > 0
        else { return nil }
        let after = stops[1...own].reduce(0) { $0 + $1.secondsFromPrevious }
        return (stops[0].at, after, own)
    }

    /// The planned seconds from the order's pickup to its drop-off when other orders' stops lie between; nil when it
    /// goes straight there.
    public var stackedRide: (seconds: Double, stops: Int)? {
        guard let stops, let p = stops.firstIndex(where: { $0.tripId == id && $0.stop == .pickup }),
            let d = stops.firstIndex(where: { $0.tripId == id && $0.stop == .dropoff }), d > p + 1
        else { return nil }
        return (stops[(p + 1)...d].reduce(0) { $0 + $1.secondsFromPrevious }, d - p - 1)
    }
}

/// The stops left once trips move on.
public enum StopPlan {
    /// Whether `stop` is still to be made, going by its trip as it now is (nil: no longer held by `courier`).
    static func isLeft(_ stop: PlannedStop, trip: TripRecord?, courier: String) -> Bool {
        guard let trip, trip.status.isActive, trip.providerId == courier else { return false }
        return stop.stop == .dropoff || trip.nextOwnStop == .pickup
    }

    /// `stops` without those made or dropped, going by `trips` (the records as they now are); nil when fewer than two
    /// orders are left on it (an order carried alone has no plan).
    public static func remaining(_ stops: [PlannedStop], trips: [String: TripRecord], courier: String) -> [PlannedStop]?
    {
        let left = stops.filter { isLeft($0, trip: trips[$0.tripId], courier: courier) }
        return Set(left.map(\.tripId)).count >= 2 ? left : nil
    }
}
