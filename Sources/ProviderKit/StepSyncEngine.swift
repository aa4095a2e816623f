import HTTPTransport
public import EnRouteModels

/// The platform's sync engine for the step outbox: sends unanswered changes in the order they were made, one at a time,
/// and applies each answer (`onStepResult`).
///
/// Applied: the change leaves the outbox. Rejected (409): it leaves with every later change for that trip, and the
/// real trip replaces the local copy with an explanation. A transport failure, 5xx, 408, 429 or 401 keeps the change
/// and retries after a growing pause; another 4xx drops the change, because resending it can never succeed.
public actor StepSyncEngine {
    /// What happened to a change.
    public enum Event: Sendable, Equatable {
        /// The server applied it (now or on an earlier attempt).
        case applied(StepChange, LocalTrip)
        /// The server refused it; the trip shows the real state, and later changes for it were dropped too.
        case rejected(StepChange, LocalTrip, notice: String, discarded: [StepChange])
        /// The server can never take it (a 4xx other than 409); it and the trip's later changes were dropped.
        case dropped(StepChange, reason: String)
        /// It could not be sent now; it stays and is tried again after `after`.
        case willRetry(StepChange, after: Duration, reason: String)
    }

    /// The outbox this engine drains.
    public nonisolated let outbox: StepOutbox
    private let api: any StepSending
    private let clock: any Clock<Duration>
    private let backoff: SyncBackoff
    private let wake: AsyncStream<Void>.Continuation
    private let wakes: AsyncStream<Void>
    private var listeners: [AsyncStream<Event>.Continuation] = []
    private var draining = false
    private nonisolated let pause = Locked<Task<Void, any Error>?>(nil)
    private var failures = 0

    /// Drains `outbox` through `api`; `clock` times the pauses between attempts.
    public init(
        outbox: StepOutbox, api: any StepSending, clock: any Clock<Duration>, backoff: SyncBackoff = SyncBackoff()
    ) {
        self.outbox = outbox
        self.api = api
        self.clock = clock
        self.backoff = backoff
        (wakes, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// `reportStep` then `syncEngine.requestRun()`: records the step locally and asks for a send.
    @discardableResult
    /// A `delivered` step may name its proof (`ProofCaptureQueue.capture`'s id).
    public nonisolated func reportStep(
        _ step: ProviderStep, on trip: TripSnapshot, proofId: String? = nil
    ) throws
        -> (change: StepChange, trip: LocalTrip)
    {
        let result = try outbox.reportStep(step, on: trip, proofId: proofId)
        requestRun()
        return result
    }

    /// Asks `run()` to send whatever is waiting, now, even in the middle of a retry pause (for example when the
    /// network is back).
    public nonisolated func requestRun() {
        wake.yield()
        pause.withLock { $0?.cancel() }
    }

    /// Every event from now on.
    public func events() -> AsyncStream<Event> {
        let (stream, continuation) = AsyncStream.makeStream(of: Event.self)
        listeners.append(continuation)
        return stream
    }

    /// Sends on each `requestRun()` (and once at start, for changes left by an earlier process); after a failure,
    /// pauses by the backoff and tries again. Returns when cancelled.
    public func run() async {
        requestRun()
        var wakeups = wakes.makeAsyncIterator()
        while !Task.isCancelled {
            guard await wakeups.next() != nil else { return }
            while !Task.isCancelled, let delay = await drain() {
                let sleeper = Task { [clock] in try await clock.sleep(for: delay) }
                pause.withLock { $0 = sleeper }
                // Ends when the pause is over, when `requestRun()` cuts it short, or when `run()` is cancelled.
                _ = await withTaskCancellationHandler {
                    await sleeper.result
                } onCancel: {
                    sleeper.cancel()
                }
                pause.withLock { $0 = nil }
            }
        }
    }

    /// Sends every waiting change in order. Returns nil when the outbox is empty, else the pause before the next try.
    @discardableResult
    public func drain() async -> Duration? {
        guard !draining else { return nil }
        draining = true
        defer { draining = false }
        while !Task.isCancelled {
            let next: StepChange?
            do { next = try outbox.pending().first } catch { return failed(nil, error) }
            guard let change = next else { return nil }
            do {
                switch try await api.send(change) {
                case .applied(let trip):
                    let local = try outbox.store.complete(change.changeId, trip: trip)
                    emit(.applied(change, local))
                case .rejected(let trip, let reason):
                    let (local, discarded) = try outbox.store.reject(change.changeId, trip: trip)
                    emit(
                        .rejected(
                            change, local,
                            notice: StepRejectionNotice.text(step: change.step, trip: trip, reason: reason),
                            discarded: discarded))
                }
                failures = 0
            } catch  where SyncBackoff.isTransient(error) {
                return failed(change, error)
            } catch {
                failures = 0
                let dropped = (try? outbox.store.discard(change.changeId, tripId: change.tripId)) ?? [change]
                for change in dropped { emit(.dropped(change, reason: String(describing: error))) }
            }
        }
        return backoff.initial
    }

    private func failed(_ change: StepChange?, _ error: any Error) -> Duration {
        failures += 1
        let pause = backoff.delay(afterFailures: failures, error: error)
        if let change { emit(.willRetry(change, after: pause, reason: String(describing: error))) }
        return pause
    }

    private func emit(_ event: Event) {
        for listener in listeners { listener.yield(event) }
    }
}
