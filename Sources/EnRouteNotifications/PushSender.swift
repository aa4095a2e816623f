public import Foundation
public import EnRouteDomain
import Synchronization
public import EnRouteLogging

/// Drains the push outbox: resolves each message's devices at send time, sends, and retries with backoff.
///
/// Delivery is at least once: a message leaves the outbox only after every target was handled, so a
/// sender killed mid-drain resends on restart (APNs' collapse id and the app's notification id absorb
/// the repeat). A message is never sent or retried past its expiry, nor an offer's once the offer has
/// ended. A Live Activity push older than one already delivered to that activity is dropped, so its
/// timestamps only rise. Time comes from the injected clock and `now`.
public final class PushSender: Sendable {
    private let store: any TripStore
    private let devices: any DeviceRepository
    private let ledger: any NotificationLedger
    private let gateway: any PushGateway
    private let now: @Sendable () -> Date
    private let metrics: (any MetricsSink)?
    private let policy: PushRetryPolicy
    private let builder = PushPayloadBuilder()
    private let log: Logger
    private let offerIsOpen: @Sendable (_ offerId: String, _ providerId: String) -> Bool
    /// The drain loop: again after `pollInterval`, or at once on `wake()`.
    private let loop: PollLoop
    /// Targets already delivered per message, so a retry goes only to the rest (lost on restart, harmlessly).
    private let delivered = Mutex<[String: Set<String>]>([:])
    /// The newest Live Activity push delivered per activity token, as (timestamp, order version); an older one
    /// still waiting (a retry) is dropped, so an activity's timestamps only rise. In memory, pruned by age.
    private let newestActivity = Mutex<[String: (timestamp: Int, version: Int)]>([:])
    public let batchSize: Int
    public var pollInterval: Duration { loop.interval }

    /// A sender over `store`'s outbox; `offerIsOpen` says whether an offer is still open for its provider
    /// (without it, offer jobs are dropped unsent).
    public init(
        store: any TripStore, devices: any DeviceRepository, ledger: any NotificationLedger, gateway: any PushGateway,
        clock: any Clock<Duration>, now: @escaping @Sendable () -> Date, metrics: (any MetricsSink)? = nil,
        policy: PushRetryPolicy = PushRetryPolicy(), batchSize: Int = 50, pollInterval: Duration = .seconds(1),
        offerIsOpen: @escaping @Sendable (_ offerId: String, _ providerId: String) -> Bool = { _, _ in false },
        log: Logger = .discard
    ) {
        self.store = store; self.devices = devices; self.ledger = ledger; self.gateway = gateway
        self.now = now; self.metrics = metrics; self.policy = policy; self.batchSize = max(1, batchSize)
        self.loop = PollLoop(clock: clock, interval: pollInterval); self.offerIsOpen = offerIsOpen; self.log = log
    }

    /// Drains, then again after `pollInterval` or as soon as `wake()` is called, until the task is cancelled.
    public func run() async {
        await loop.run { _ = try? await self.drain() }
    }

    /// How long a claimed message stays this node's before another may send it: longer than one send's timeouts.
    public static let claimSeconds: TimeInterval = 60

    /// Makes `run()` drain now rather than at its next poll (an offer lasts seconds); a no-op without `run()`.
    public func wake() { loop.wake() }

    /// Sends every message due now, in order; returns how many left the outbox.
    @discardableResult
    public func drain() async throws -> Int {
        var finished = 0
        while true {
            try Task.checkCancellation()
            // Claimed, so that of several nodes one sends each message; one that dies with a batch leaves it to the
            // others.
            let at = now()
            let due = try await store.claimOutbox(
                topic: PushJob.topic, now: at, until: at.addingTimeInterval(Self.claimSeconds), limit: batchSize)
            if due.isEmpty { return finished }
            for message in due {
                try Task.checkCancellation()
                if try await process(message) { finished += 1 }
            }
            // Rescheduled messages are no longer due, so the next page makes progress.
        }
    }

    /// Handles one message; true when it left the outbox.
    private func process(_ message: OutboxMessage) async throws -> Bool {
        let job: PushJob
        do { job = try PushJob.decode(message.payload) } catch {
            log.warning("push outbox: dropping unreadable message \(message.id): \(error)")
            return try await complete(message, result: "unreadable")
        }
        if now() > job.expiresAt { return try await complete(message, result: "expired") }
        if isSuperseded(job) { return try await complete(message, result: "superseded") }
        if job.kind == .offer, !(job.offer.map { offerIsOpen($0.offerId, job.accountId) } ?? false) {
            return try await complete(message, result: "offerEnded")
        }
        let targets = try await self.targets(for: job)
        var retry: (RetryReason, String)?
        for target in targets where !(delivered.withLock { $0[message.id]?.contains(target.token) ?? false }) {
            let push: APNsPush
            do { push = try build(job, for: target, messageID: message.id) } catch {
                log.warning("push \(message.id): cannot build for \(target.token.prefix(8))…: \(error)")
                continue
            }
            let outcome = await gateway.send(push)
            try Task.checkCancellation()
            count(job, outcome)
            switch outcome {
            case .delivered:
                delivered.withLock { _ = $0[message.id, default: []].insert(target.token) }
                if job.kind == .liveActivity { noteDelivered(job) }
                if let sent = sentNotification(job) { try await ledger.recordSent(sent) }
            case .tokenInvalid(let since):
                let at = since.map { Date(timeIntervalSince1970: $0) } ?? now()
                // A Live Activity token is not a device token: only device tokens are removed.
                if target.device != nil, try await devices.removeUnlessRegistered(after: at, token: target.token) {
                    log.info("push: removed dead device token \(target.token.prefix(8))…")
                }
            case .rejected(let reason):
                log.warning("push \(message.id): APNs refused it for \(target.token.prefix(8))…: \(reason)")
            case .retry(let why, let reason):
                retry =
                    retry.map { $0.0 == .serverError || $0.0 == .configuration ? $0 : (why, reason) } ?? (why, reason)
            }
        }
        guard let (why, reason) = retry else { return try await complete(message, result: "sent") }
        let attempts = message.attempts + 1
        if attempts >= policy.maximumAttempts {
            log.warning("push \(message.id): giving up after \(attempts) attempts (\(reason))")
            return try await complete(message, result: "abandoned")
        }
        let delay = policy.delay(after: attempts, reason: why)
        let (seconds, atto) = delay.components
        let notBefore = now().addingTimeInterval(Double(seconds) + Double(atto) / 1e18)
        // A retry that could only come after the expiry is never made.
        if notBefore > job.expiresAt { return try await complete(message, result: "expired") }
        try await store.rescheduleOutbox(id: message.id, attempts: attempts, notBefore: notBefore)
        metrics?.increment(
            "enroute_push_retries_total", labels: ["reason": why.rawValue],
            help: "Outbox messages put back for a later attempt.")
        return false
    }

    /// A Live Activity push older than one already delivered to the same activity.
    private func isSuperseded(_ job: PushJob) -> Bool {
        guard job.kind == .liveActivity, let token = job.liveActivityToken, let stamp = job.timestamp,
            let newest = newestActivity.withLock({ $0[token] })
        else { return false }
        return (stamp, job.orderVersion) <= (newest.timestamp, newest.version)
    }

    private func noteDelivered(_ job: PushJob) {
        guard let token = job.liveActivityToken, let stamp = job.timestamp else { return }
        let horizon = Int(now().timeIntervalSince1970) - 12 * 3600
        newestActivity.withLock { newest in
            if let old = newest[token], (old.timestamp, old.version) >= (stamp, job.orderVersion) { return }
            newest[token] = (stamp, job.orderVersion)
            // Live Activity jobs live hours at most, so marks older than that can no longer matter.
            if newest.count > 10_000 { newest = newest.filter { $0.value.timestamp > horizon } }
        }
    }

    private func complete(_ message: OutboxMessage, result: String) async throws -> Bool {
        try await store.completeOutbox(id: message.id)
        delivered.withLock { _ = $0.removeValue(forKey: message.id) }
        metrics?.increment(
            "enroute_push_outbox_done_total", labels: ["result": result], help: "Outbox messages finished, by result.")
        return true
    }

    private struct Target { let token: String; let environment: APNsEnvironment; let device: DeviceRecord? }

    /// Order updates, offers, chat messages and booking reminders go to the account's devices as registered now; Live
    /// Activity pushes to the activity's token, on the environment of the account's newest device.
    private func targets(for job: PushJob) async throws -> [Target] {
        let registered = try await devices.devices(accountId: job.accountId)
        switch job.kind {
        case .orderUpdate, .offer, .chatMessage, .booking:
            return registered.map { Target(token: $0.token, environment: $0.environment, device: $0) }
        case .liveActivity:
            guard let token = job.liveActivityToken else { return [] }
            return [Target(token: token, environment: registered.first?.environment ?? .production, device: nil)]
        }
    }

    private func build(_ job: PushJob, for target: Target, messageID: String) throws -> APNsPush {
        let id = PushPayloadBuilder.apnsID(message: messageID, token: target.token)
        switch job.kind {
        case .orderUpdate:
            guard let device = target.device, let stage = job.stage else {
                throw PushPayloadBuilder.BuildError.incomplete("device")
            }
            return APNsPush(
                token: target.token, environment: target.environment, pushType: .alert, priority: stage.priority,
                expiration: job.expiresAt,
                collapseID: PushPayloadBuilder.collapseID(orderId: job.orderId, stage: stage),
                apnsID: id, payload: try builder.orderUpdate(job, device: device))
        case .liveActivity:
            return APNsPush(
                token: target.token, environment: target.environment, pushType: .liveactivity,
                priority: job.priority ?? 10,
                expiration: job.expiresAt, collapseID: nil, apnsID: id, payload: try builder.liveActivity(job))
        case .offer:
            // APNs keeps it no longer than the offer lasts: an expired offer is never shown.
            guard let offer = job.offer else { throw PushPayloadBuilder.BuildError.incomplete("offer") }
            return APNsPush(
                token: target.token, environment: target.environment, pushType: .alert, priority: 10,
                expiration: offer.expiresAt, collapseID: PushPayloadBuilder.collapseID(offerId: offer.offerId),
                apnsID: id, payload: try builder.offer(job))
        case .chatMessage:
            guard let device = target.device else { throw PushPayloadBuilder.BuildError.incomplete("device") }
            return APNsPush(
                token: target.token, environment: target.environment, pushType: .alert, priority: 10,
                expiration: job.expiresAt, collapseID: PushPayloadBuilder.collapseID(chatTripId: job.orderId),
                apnsID: id, payload: try builder.chatMessage(job, device: device))
        case .booking:
            return APNsPush(
                token: target.token, environment: target.environment, pushType: .alert, priority: 10,
                expiration: job.expiresAt, collapseID: PushPayloadBuilder.collapseID(bookingTripId: job.orderId),
                apnsID: id, payload: try builder.booking(job))
        }
    }

    /// What the ledger remembers of a delivered push, so that its open can be counted.
    private func sentNotification(_ job: PushJob) -> SentNotification? {
        guard let id = job.notificationId else { return nil }
        switch job.kind {
        case .orderUpdate:
            guard let stage = job.stage else { return nil }
            return SentNotification(
                id: id, accountId: job.accountId, campaign: "orderUpdates", stage: stage.rawValue, sentAt: now())
        case .offer:
            return SentNotification(id: id, accountId: job.accountId, campaign: "tripOffers", stage: "", sentAt: now())
        case .chatMessage:
            return SentNotification(
                id: id, accountId: job.accountId, campaign: "chatMessages", stage: "", sentAt: now())
        case .booking:
            return SentNotification(
                id: id, accountId: job.accountId, campaign: "bookingReminders", stage: job.booking?.rawValue ?? "",
                sentAt: now())
        case .liveActivity:
            return nil
        }
    }

    private func count(_ job: PushJob, _ outcome: PushOutcome) {
        let result: String =
            switch outcome {
            case .delivered: "delivered"
            case .tokenInvalid: "tokenInvalid"
            case .rejected: "rejected"
            case .retry: "retry"
            }
        metrics?.increment(
            "enroute_push_sends_total", labels: ["kind": job.kind.rawValue, "result": result],
            help: "Pushes handed to APNs, by kind and outcome.")
    }
}
