public import EnRouteModels

/// The explanation shown when the server refuses a step and the screen rolls back to the real state (`showRealState`).
public enum StepRejectionNotice {
    /// What to tell the provider about `step` refused on `trip` for `reason`.
    public static func text(step: ProviderStep, trip: TripSnapshot, reason: String) -> String {
        let tapped = label(step)
        if trip.status == "cancelled" {
            let who = trip.cancelledBy.map { $0 == "provider" ? "you" : "the \($0)" } ?? "someone"
            let why = trip.cancelReason.map { " (\($0))" } ?? ""
            return "The trip was cancelled by \(who)\(why), so “\(tapped)” was not recorded."
        }
        return "“\(tapped)” was not recorded: \(reason) The trip is \(trip.status)."
    }

    /// The button title for a step.
    public static func label(_ step: ProviderStep) -> String {
        switch step {
        case .driverArrived: "Arrived"
        case .onTrip: "Picked up"
        case .completed: "Dropped off"
        case .onTheWay: "Picked up"
        case .arriving: "Arriving"
        case .delivered: "Delivered"
        case .cancelled: "Give up trip"
        }
    }
}
