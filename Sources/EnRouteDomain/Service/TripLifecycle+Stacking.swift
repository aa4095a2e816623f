public import Foundation
public import EnRouteModels

/// Orders a courier carries together: one plan of stops, kept on each of them and changed with them.
extension TripLifecycle {
    /// A courier takes `tripId` on the route `stops` over it and the orders they carry already (the offer's plan).
    public func assignStacked(_ tripId: String, to courier: String, stops: [PlannedStop]) async throws -> TripRecord {
        try await move(tripId, .assignProvider(courier), by: Account(id: courier, role: .provider), plan: stops)
    }

    /// In the transaction of a change to an order on a plan: the stops it made or took away leave the plan, on it and
    /// on every other order the courier carries with it (each such order gets a version, so its customer and the
    /// courier hear of it). Returns the other orders written, before and after. `cached` gives each order as held in
    /// memory, whose latest fix (newer than the stored one between changes) the rewrite keeps.
    static func replan(
        _ next: inout TripRecord, previous: TripRecord, in tx: any TripTransaction, at: Date,
        estimator: any TripEstimator, observers: [any TripChangeObserver], cached: (String) -> TripRecord?
    ) async throws -> [(old: TripRecord, new: TripRecord)] {
        guard let stops = next.stops ?? previous.stops, let courier = previous.providerId ?? next.providerId else {
            return []
        }
        var trips: [String: TripRecord] = [next.id: next]
        for id in Set(stops.map(\.tripId)) where id != next.id {
            if let other = try await tx.trip(id) { trips[id] = other }
        }
        let left = StopPlan.remaining(stops, trips: trips, courier: courier)
        next.stops = next.providerId == courier && next.status.isActive ? left : nil
        var written: [(old: TripRecord, new: TripRecord)] = []
        for (id, old) in trips where id != next.id && old.providerId == courier && old.status.isActive {
            guard old.stops != left else { continue }
            var new = old
            new.stops = left
            new.version = old.version + 1
            new.updatedAt = at
            new.keepNewerFix(of: cached(id))
            new = estimator.refreshETA(new, now: at)
            try await tx.update(new, expectedVersion: old.version)
            try await tx.append(
                ChangeLogEntry(
                    tripId: id, version: new.version, status: new.status.name, actorRole: .backend, actorId: "dispatch",
                    serverTime: at, deviceTime: nil, changeId: nil))
            for observer in observers { try await observer.tripChanged(from: old, to: new, in: tx) }
            written.append((old, new))
        }
        return written
    }
}
