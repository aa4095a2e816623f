import EnRouteModels
import ProviderKit

/// Which trip a provider carrying several orders advances next, going by the planned route and the phone's own trips
/// (ProviderTripViewModel's rule, which ProviderKit keeps internal): a step reported on the phone makes a stop before
/// the server's trimmed `stops` arrive.
enum CourierRoute {
    /// A trip and the stop of it the provider drives to.
    struct Target: Equatable {
        let tripId: String
        let stop: RouteStop
    }

    /// The first stop of `plan` still to make among `trips` (the trips carried, in the order taken): a pickup while
    /// its order is not collected, a drop-off while it is not handed over. Without such a stop (one order carried, or
    /// a plan that names none of them), the first trip with a stop left; nil once every trip is over.
    static func next(plan: [PlannedStop]?, trips: [LocalTrip]) -> Target? {
        let open = trips.compactMap { trip in stop(of: trip).map { Target(tripId: trip.id, stop: $0) } }
        for planned in plan ?? [] {
            guard let target = open.first(where: { $0.tripId == planned.tripId }) else { continue }
            if planned.stop == .dropoff || target.stop == .pickup { return target }
        }
        return open.first
    }

    /// The stop `trip` leads to next by the status on the phone's screen (the drop-off once collected or on board,
    /// else the pickup); nil once it is over, on the screen or on the server.
    static func stop(of trip: LocalTrip) -> RouteStop? {
        if ProviderStep.isFinished(trip.server.status) || ProviderStep.isFinished(trip.displayedStatus) { return nil }
        return switch (trip.server.kind, trip.displayedStatus) {
        case ("ride", "driverArrived"), ("ride", "onTrip"), ("delivery", "onTheWay"), ("delivery", "arriving"): .dropoff
        default: .pickup
        }
    }
}
