import EnRouteModels

/// The rider app's live loop for any owner: resync with `activeTrip()`, then stream; back off on failures.
///
/// Runs on the caller's actor, so `handle` may touch the caller's state. It stops when `handle` returns
/// false (the trip is over) or the task is cancelled.
struct LiveTripLoop: Sendable {
    let api: any TripAPI
    let channel: any LiveTripChannel
    let clock: any Clock<Duration>

    /// The pause after `attempt` failures in a row: 2, 4, 8, 16, then 30 s.
    static func backoff(attempt: Int) -> Duration {
        attempt >= 5 ? .seconds(30) : .seconds(1 << attempt)
    }

    func run(
        tripID: String, isolation: isolated (any Actor)? = #isolation,
        handle: (TripEvent) -> Bool
    ) async {
        var attempt = 0
        while !Task.isCancelled {
            do {
                // Resync first: events sent while we were away are not replayed.
                if let fresh = try await api.activeTrip(), fresh.id == tripID {
                    guard handle(.tripUpdated(fresh)) else { return }
                }
                for try await event in channel.events(tripID: tripID) {
                    attempt = 0
                    guard handle(event) else { return }
                }
                // The feed ended while the trip is still on: a dropped connection, not the end of the ride.
            } catch {
                if Task.isCancelled { return }
            }
            attempt += 1
            try? await clock.sleep(for: Self.backoff(attempt: attempt))
        }
    }
}
