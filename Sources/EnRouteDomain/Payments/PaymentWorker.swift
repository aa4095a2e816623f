public import Foundation
import Synchronization
public import EnRouteLogging

/// Drains the `payments` outbox: settles ended trips, charges tips and applies gateway callbacks, each as a job that
/// was committed with the change that caused it, so a crash between the change and the money only delays it.
/// A job whose gateway call did not get a clear answer is retried with backoff under the same keys; every
/// `reconcileEvery` the reconciler releases holds no trip took; on a node of several (`TripService.node`), only the
/// node holding the store's `reconciler` lease does, renewing it on each of its passes. Up to `concurrency` jobs run at
/// once (a gateway call is a network round trip, and one at a time a node settles fewer trips than it serves), those
/// of one trip or one intent in order. Time comes from the injected clock and `now`.
public final class PaymentWorker: Sendable {
    /// Held weakly: the running loop must not keep a dropped backend's service alive.
    private weak let service: TripService?
    private let measurement: (any TripMeasurement)?
    private let now: @Sendable () -> Date
    private let log: Logger
    private let loop: PollLoop
    private let lastReconcile = Mutex<Date>(.distantPast)
    private let passes = Mutex(0)
    private let waited = Mutex<TimeInterval>(0)
    public var pollInterval: Duration { loop.interval }
    public let reconcileEvery: TimeInterval
    /// After this many tries a settlement prices on what it has rather than waiting for a measurement.
    public let measurementTries = 3
    /// How many jobs run at once.
    public let concurrency: Int

    public init(
        service: TripService, measurement: (any TripMeasurement)?, clock: any Clock<Duration>,
        now: @escaping @Sendable () -> Date, pollInterval: Duration = .seconds(1), reconcileEvery: TimeInterval = 60,
        concurrency: Int = 8, log: Logger = .discard
    ) {
        self.service = service; self.measurement = measurement; self.now = now
        self.loop = PollLoop(clock: clock, interval: pollInterval); self.reconcileEvery = reconcileEvery; self.log = log
        self.concurrency = max(1, concurrency)
    }

    /// Drains, then again after `pollInterval` or on `wake()`, until cancelled.
    public func run() async {
        await loop.run { [weak self] in _ = try? await self?.drain() }
    }

    /// The store lease of the node that reconciles, among several.
    public static let reconcilerLease = "reconciler"

    /// How long the oldest job on its first try had waited when the worker last claimed jobs; 0 once none were due.
    /// It grows while settlements fall behind.
    public var lag: TimeInterval { waited.withLock { $0 } }

    /// How many reconciler passes this node has made.
    public var reconcilerPasses: Int { passes.withLock { $0 } }

    /// How long a claimed job stays this node's before another may take it: longer than any gateway call lasts.
    public static let claimSeconds: TimeInterval = 120

    /// Makes `run()` drain now rather than at its next poll.
    public func wake() { loop.wake() }

    /// Whether a committed change gives the worker a job: a trip with a payment ended (its settlement), or a tip was
    /// recorded (its charge).
    public static func hasWork(from old: TripRecord?, to new: TripRecord) -> Bool {
        (old?.status.isActive ?? false) && !new.status.isActive && new.payment != nil || new.tip?.state == .pending
    }

    /// Runs every job due now (and the reconciler when its time has come); returns how many jobs finished.
    @discardableResult
    public func drain() async throws -> Int {
        guard let service else { return 0 }
        let at = now()
        if lastReconcile.withLock({ at.timeIntervalSince($0) >= reconcileEvery }) {
            lastReconcile.withLock { $0 = at }
            if await mayReconcile(service, at: at) {
                passes.withLock { $0 += 1 }
                do { try await service.reconcilePayments() } catch {
                    log.warning("payments: reconciler pass failed: \(error)")
                }
            }
        }
        var finished = 0
        while true {
            try Task.checkCancellation()
            // Claimed, so that of several nodes one runs each job; a node that dies mid-job leaves it to the others.
            let at = now()
            let due = try await service.store.claimOutbox(
                topic: PaymentJob.topic, now: at, until: at.addingTimeInterval(Self.claimSeconds),
                limit: max(20, 2 * concurrency))
            let oldest = due.lazy.filter { $0.attempts == 0 }.map(\.createdAt).min()
            waited.withLock { $0 = oldest.map { max(0, at.timeIntervalSince($0)) } ?? 0 }
            if due.isEmpty { return finished }
            finished += try await run(due)
        }
    }

    /// Runs claimed jobs, up to `concurrency` at once; the jobs of one subject (a trip, an intent) one after another,
    /// oldest first, so that a callback never overtakes the one before it. Returns how many left the outbox.
    private func run(_ due: [OutboxMessage]) async throws -> Int {
        var lanes: [[Claimed]] = []
        var laneOf: [String: Int] = [:]
        for message in due {
            let claimed = Claimed(message: message, job: Result { try PaymentJob.decode(message.payload) })
            let subject = (try? claimed.job.get())?.subject ?? message.id
            if let lane = laneOf[subject] {
                lanes[lane].append(claimed)
            } else {
                laneOf[subject] = lanes.count
                lanes.append([claimed])
            }
        }
        return try await withThrowingTaskGroup(of: Int.self) { group in
            var next = lanes.makeIterator()
            func start() -> Bool {
                guard let lane = next.next() else { return false }
                group.addTask {
                    var left = 0
                    for claimed in lane where try await self.process(claimed) { left += 1 }
                    return left
                }
                return true
            }
            for _ in 0..<concurrency {
                guard start() else { break }
            }
            var finished = 0
            while let left = try await group.next() {
                finished += left
                _ = start()
            }
            return finished
        }
    }

    /// Whether this node reconciles now: always on a node of its own; on one of several, while it holds (takes or
    /// renews) the reconciler lease, which outlasts two passes so that a missed look does not hand it over, and
    /// runs out for the next node when its holder stops.
    private func mayReconcile(_ service: TripService, at: Date) async -> Bool {
        guard let node = service.node else { return true }
        do {
            return try await service.store.claimLease(
                Self.reconcilerLease, node: node, until: at.addingTimeInterval(reconcileEvery * 2.5), now: at)
        } catch {
            log.warning("payments: could not take the reconciler lease: \(error)")
            return false
        }
    }

    /// A claimed message and its job, read once.
    private struct Claimed: Sendable {
        let message: OutboxMessage
        let job: Result<PaymentJob, any Error>
    }

    /// One job; true when it left the outbox.
    private func process(_ claimed: Claimed) async throws -> Bool {
        guard let service else { return false }
        let store = service.store, message = claimed.message
        let job: PaymentJob
        do { job = try claimed.job.get() } catch {
            log.warning("payments: dropping unreadable job \(message.id): \(error)")
            try await store.completeOutbox(id: message.id)
            return true
        }
        do {
            switch job {
            case .settle(let trip):
                let final = message.attempts + 1 >= measurementTries
                if try await service.settlePayment(of: trip, measurement: measurement, final: final) == .retryLater {
                    try await store.rescheduleOutbox(
                        id: message.id, attempts: message.attempts + 1, notBefore: now().addingTimeInterval(5))
                    return false
                }
            case .tip(let trip):
                try await service.chargeTip(of: trip)
            case .event(let event):
                try await service.apply(event)
            }
            try await store.completeOutbox(id: message.id)
            return true
        } catch {
            // No clear answer (the gateway, the store): again later under the same keys, backing off to 10 minutes.
            let attempts = message.attempts + 1
            let delay = min(600, 2 * pow(2, Double(min(attempts, 10))))
            log.warning("payments: job \(message.id) failed (attempt \(attempts)), again in \(Int(delay)) s: \(error)")
            try await store.rescheduleOutbox(
                id: message.id, attempts: attempts, notBefore: now().addingTimeInterval(delay))
            return false
        }
    }
}
