public import Foundation
public import EnRouteModels

/// Stacking: an order offered to a courier already carrying one, when it fits on their way.
extension Dispatcher {
    /// What the search offers: a courier carrying orders who can take this one on their way within the limits, before
    /// `fresh` (the courier of its own the look found); else `fresh`.
    func withStacking(_ fresh: Look, for trip: TripRecord, excluding excluded: Set<String>) async -> Look {
        guard trip.kind == .delivery, trip.scheduledFor == nil, policy.stackCapacity > 1, fresh != .unreadable else {
            return fresh
        }
        guard let stacked = await stackedCandidate(for: trip, excluding: excluded, fresh: fresh) else { return fresh }
        return .found(stacked)
    }

    /// The courier carrying orders whose route takes `trip` with its customer served soonest; nil when none fits.
    func stackedCandidate(
        for trip: TripRecord, excluding excluded: Set<String>, fresh: Look
    ) async -> DispatchCandidate? {
        let holding = book.holders()
        let service = self.service
        let capacity = policy.stackCapacity
        let hits =
            (try? await presence.nearest(to: trip.pickup, limit: policy.shortlist, within: policy.searchRadius) { id in
                !excluded.contains(id) && !holding.contains(id)
                    && Self.canCarryMore(service.activeTrips(provider: id), capacity: capacity)
            }) ?? []
        guard !hits.isEmpty else { return nil }
        let at = now()
        var freshPickup: Double?
        if case .found(let candidate) = fresh {
            freshPickup = await ranking.pickupSeconds([candidate], pickup: trip.pickup).first
        }
        let planner = StopPlanner(capacity: capacity, limit: Self.seconds(policy.stackLimit))
        let new = order(trip, at: at)
        var best: (candidate: DispatchCandidate, arrival: Double)?
        for hit in hits {
            let carried = service.activeTrips(provider: hit.id)
            let points = [hit.coordinate, trip.pickup, trip.dropoff] + carried.flatMap { [$0.pickup, $0.dropoff] }
            let table = await ranking.travelTable(points)
            let seconds = { (a: Coordinate, b: Coordinate) -> Double in
                guard let i = points.firstIndex(of: a), let j = points.firstIndex(of: b) else { return .infinity }
                return table[i][j]
            }
            // A courier of its own: to the merchant, the wait until ready, the stop, then to the customer.
            let freshArrival = freshPickup.map {
                max($0, new.readyIn) + planner.stopSeconds + seconds(trip.pickup, trip.dropoff)
            }
            guard
                let plan = planner.insert(
                    new, into: carried.first?.stops ?? [], carrying: carried.map { order($0, at: at) },
                    from: hit.coordinate, freshArrival: freshArrival, seconds: seconds),
                let arrival = plan.arrivals[trip.id], arrival < (best?.arrival ?? .infinity)
            else { continue }
            var candidate = DispatchCandidate(providerId: hit.id, position: hit.coordinate, distance: hit.distance)
            candidate.stops = plan.stops
            candidate.addedSeconds = plan.addedSeconds
            best = (candidate, arrival)
        }
        if best != nil {
            metrics.increment(
                "enroute_dispatch_stacked_offers_total", help: "Orders offered to a courier already carrying one.")
        }
        return best?.candidate
    }

    /// Whether a provider carries orders (and nothing else) and has room for one more.
    static func canCarryMore(_ trips: [TripRecord], capacity: Int) -> Bool {
        !trips.isEmpty && trips.count < capacity && trips.allSatisfy { $0.kind == .delivery && $0.status.isActive }
    }

    /// When an order will be ready: the merchant's word, else `assumedPreparation` after it was placed.
    func readyTime(of trip: TripRecord) -> Date {
        trip.readyAt ?? trip.createdAt.addingTimeInterval(Self.seconds(policy.assumedPreparation))
    }

    /// An order as the planner sees it at `now`.
    func order(_ trip: TripRecord, at now: Date) -> StopPlanner.Order {
        StopPlanner.Order(
            tripId: trip.id, pickup: trip.pickup, dropoff: trip.dropoff,
            readyIn: max(0, readyTime(of: trip).timeIntervalSince(now)),
            pickedUp: trip.nextOwnStop == .dropoff)
    }
}
