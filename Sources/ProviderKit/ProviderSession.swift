public import EnRouteModels

/// The provider's shift: online and offline, and the event feed (offers, withdrawals, trip updates) kept open with
/// reconnects. Each (re)connection first resyncs the active trips, since the feed does not replay what was missed.
public actor ProviderSession {
    /// What the feed reports.
    public enum Update: Sendable, Equatable {
        /// A server event.
        case event(ProviderEvent)
        /// The feed dropped (or could not open); it reopens after `retryIn`.
        case disconnected(reason: String, retryIn: Duration)
    }

    /// True once the server confirmed the provider is online.
    public private(set) var isOnline = false
    private let api: any ProviderSessionAPI
    private let clock: any Clock<Duration>
    private let backoff: SyncBackoff

    /// A session over `api`; `clock` times reconnects, `backoff` their pauses.
    public init(
        api: any ProviderSessionAPI, clock: any Clock<Duration>,
        backoff: SyncBackoff = SyncBackoff(initial: .seconds(1), maximum: .seconds(30))
    ) {
        self.api = api
        self.clock = clock
        self.backoff = backoff
    }

    /// Goes online at `position`; throws when the server could not be told.
    public func goOnline(at position: Coordinate?) async throws {
        isOnline = try await api.setAvailability(online: true, position: position).online
    }

    /// Goes offline; throws when the server could not be told.
    public func goOffline() async throws {
        isOnline = try await api.setAvailability(online: false, position: nil).online
    }

    /// The feed: active trips as `tripUpdated` first, then events; on a drop, a `disconnected` update, a pause
    /// (1, 2, 4 … 30 s; reset by any event) and a reconnect with `Last-Event-ID`. Ends when the consumer stops.
    public nonisolated func updates() -> AsyncStream<Update> {
        let (stream, continuation) = AsyncStream.makeStream(of: Update.self)
        let task = Task { [api, clock, backoff] in
            var lastEventID: String?
            var failures = 0
            while !Task.isCancelled {
                var reason = "the feed ended"
                do {
                    for trip in try await api.activeTrips() { continuation.yield(.event(.tripUpdated(trip))) }
                    for try await message in api.events(lastEventID: lastEventID) {
                        failures = 0
                        lastEventID = message.id ?? lastEventID
                        continuation.yield(.event(message.event))
                    }
                } catch {
                    reason = String(describing: error)
                }
                if Task.isCancelled { break }
                failures += 1
                let pause = backoff.delay(afterFailures: failures, error: nil)
                continuation.yield(.disconnected(reason: reason, retryIn: pause))
                do { try await clock.sleep(for: pause) } catch { break }
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }
}
