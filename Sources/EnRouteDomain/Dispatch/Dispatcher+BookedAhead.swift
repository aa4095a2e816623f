public import Foundation
import Synchronization

/// Trips booked ahead: the search waits until it is due to begin, then begins like any other.
///
/// The waiting search is the timer: it is the trip's own search, so it is begun again for every stored trip after a
/// restart, and on a node of several it runs under the search's lease (a node that dies hands it over). Beginning is
/// one change that a second caller finds done (`TripLifecycle.startMatching`), so a takeover never holds twice.
extension Dispatcher {
    /// Waits until the booked-ahead trip's search should begin and begins it; false when the trip no longer needs a
    /// provider (cancelled, its card refused) or the search was stopped. A trip asked for now passes at once.
    func awaitMatchingStart(
        _ tripId: String, _ inbox: inout AsyncStream<Signal>.Iterator, _ continuation: AsyncStream<Signal>.Continuation
    ) async -> Bool {
        guard let trip = waiting(tripId) else { return false }
        guard trip.isBookedAhead, let due = trip.scheduledFor else { return true }
        // Supply is measured once, a while before: its nearest idle provider's road time decides when to begin.
        let look = due.addingTimeInterval(-Self.seconds(policy.bookedLookahead))
        guard await wait(until: look, tripId, &inbox, continuation), let current = waiting(tripId) else { return false }
        let start = BookingAhead.matchingStart(
            due: due, pickupSeconds: await nearestPickupSeconds(current), margin: Self.seconds(policy.bookedMargin),
            fallbackPickup: Self.seconds(policy.bookedFallbackPickup))
        guard await wait(until: start, tripId, &inbox, continuation) else { return false }
        while !Task.isCancelled {
            guard await leaseSearch(tripId) else { return false }
            do {
                let result: String
                switch try await service.lifecycle.startMatching(tripId) {
                case .started: result = "started"
                case .refused: result = "declined"
                case .gone: return false
                }
                metrics.increment(
                    "enroute_dispatch_booked_started_total", labels: ["result": result],
                    help: "Searches of trips booked ahead that reached their start, by what happened then.")
                return result == "started"
            } catch {
                // The store or the gateway did not answer clearly: the hold is asked again under the same key.
                log.warning("dispatch: could not begin the search of booked trip \(tripId), trying again: \(error)")
            }
            let retry = now().addingTimeInterval(Self.seconds(policy.supplyRecheck))
            guard await wait(until: retry, tripId, &inbox, continuation) else { return false }
        }
        return false
    }

    /// The nearest idle providers' least road time to the trip's pickup; nil when nobody is near or no road joins
    /// them to it.
    func nearestPickupSeconds(_ trip: TripRecord) async -> Double? {
        guard let candidates = await nearby(trip, excluding: []), !candidates.isEmpty,
            let least = await ranking.pickupSeconds(candidates, pickup: trip.pickup).min()
        else { return nil }
        return least < RoadRanking.noRoadPenalty ? least : nil
    }

    /// Sleeps until `date` on the dispatcher's clock; false when the trip stopped needing a provider or the search
    /// was stopped meanwhile.
    func wait(
        until date: Date, _ tripId: String, _ inbox: inout AsyncStream<Signal>.Iterator,
        _ continuation: AsyncStream<Signal>.Continuation
    ) async -> Bool {
        let seconds = date.timeIntervalSince(now())
        guard seconds > 0 else { return waiting(tripId) != nil }
        // Waits of hours or days are rarely cut short: a minute's step wakes each waiting trip seldom, and a cancelled
        // step's memory is freed within the minute.
        let timer = startTimer(Self.duration(seconds), continuation, step: Self.bookedWaitStep)
        defer { timer.task.cancel() }
        while let signal = await inbox.next() {
            switch signal {
            case .timer(let token) where token == timer.token: return waiting(tripId) != nil
            case .tripChanged where waiting(tripId) == nil: return false
            default: continue
            }
        }
        return false
    }

    /// The longest single timer a booked-ahead trip's wait arms.
    static let bookedWaitStep: Duration = .seconds(60)

    /// A booked-ahead ride whose round found nobody keeps looking until it is due; after that, it ends.
    func keepsLooking(_ trip: TripRecord) -> Bool {
        guard let due = trip.scheduledFor else { return false }
        return now() < due
    }
}
