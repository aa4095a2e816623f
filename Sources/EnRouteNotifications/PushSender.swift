public import Foundation
public import EnRouteServer
public import HTTPEngine
import Synchronization

/// Drains the push outbox: resolves each message's devices at send time, sends, and retries with backoff.
///
/// Delivery is at least once: a message leaves the outbox only after every target was handled, so a
/// sender killed mid-drain resends on restart (APNs' collapse id and the app's notification id absorb
/// the repeat). Time comes from the injected clock and `now`.
public final class PushSender: Sendable {
    private let store: any TripStore
    private let devices: any DeviceRepository
    private let ledger: any NotificationLedger
    private let gateway: any PushGateway
    private let clock: any Clock<Duration>
    private let now: @Sendable () -> Date
    private let metrics: MetricsRegistry?
    private let policy: PushRetryPolicy
    private let builder = PushPayloadBuilder()
    private let log: @Sendable (String) -> Void
    /// Targets already delivered per message, so a retry goes only to the rest (lost on restart, harmlessly).
    private let delivered = Mutex<[String: Set<String>]>([:])
    public let batchSize: Int
    public let pollInterval: Duration

    public init(store: any TripStore, devices: any DeviceRepository, ledger: any NotificationLedger, gateway: any PushGateway,
                clock: any Clock<Duration>, now: @escaping @Sendable () -> Date, metrics: MetricsRegistry? = nil,
                policy: PushRetryPolicy = PushRetryPolicy(), batchSize: Int = 50, pollInterval: Duration = .seconds(1),
                log: @escaping @Sendable (String) -> Void = { _ in }) {
        self.store = store; self.devices = devices; self.ledger = ledger; self.gateway = gateway; self.clock = clock
        self.now = now; self.metrics = metrics; self.policy = policy; self.batchSize = max(1, batchSize)
        self.pollInterval = pollInterval; self.log = log
    }

    /// Drains and then polls every `pollInterval` until the task is cancelled.
    public func run() async {
        while !Task.isCancelled {
            _ = try? await drain()
            do { try await clock.sleep(for: pollInterval) } catch { return }
        }
    }

    /// Sends every message due now, in order; returns how many left the outbox.
    @discardableResult
    public func drain() async throws -> Int {
        var finished = 0
        while true {
            try Task.checkCancellation()
            let due = try await store.dueOutbox(topic: PushJob.topic, now: now(), limit: batchSize)
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
            log("push outbox: dropping unreadable message \(message.id): \(error)")
            return try await complete(message, result: "unreadable")
        }
        if now() > job.expiresAt { return try await complete(message, result: "expired") }
        let targets = try await self.targets(for: job)
        var retry: (RetryReason, String)?
        for target in targets where !(delivered.withLock { $0[message.id]?.contains(target.token) ?? false }) {
            let push: APNsPush
            do { push = try build(job, for: target, messageID: message.id) } catch {
                log("push \(message.id): cannot build for \(target.token.prefix(8))…: \(error)")
                continue
            }
            let outcome = await gateway.send(push)
            try Task.checkCancellation()
            count(job, outcome)
            switch outcome {
            case .delivered:
                delivered.withLock { _ = $0[message.id, default: []].insert(target.token) }
                if job.kind == .orderUpdate, let id = job.notificationId, let stage = job.stage {
                    try await ledger.recordSent(SentNotification(id: id, accountId: job.accountId, campaign: "orderUpdates",
                                                                 stage: stage.rawValue, sentAt: now()))
                }
            case .tokenInvalid(let since):
                let at = since.map { Date(timeIntervalSince1970: $0) } ?? now()
                if job.kind == .orderUpdate, try await devices.removeUnlessRegistered(after: at, token: target.token) {
                    log("push: removed dead device token \(target.token.prefix(8))…")
                }
            case .rejected(let reason):
                log("push \(message.id): APNs refused it for \(target.token.prefix(8))…: \(reason)")
            case .retry(let why, let reason):
                retry = retry.map { $0.0 == .serverError || $0.0 == .configuration ? $0 : (why, reason) } ?? (why, reason)
            }
        }
        guard let (why, reason) = retry else { return try await complete(message, result: "sent") }
        let attempts = message.attempts + 1
        if attempts >= policy.maximumAttempts {
            log("push \(message.id): giving up after \(attempts) attempts (\(reason))")
            return try await complete(message, result: "abandoned")
        }
        let delay = policy.delay(after: attempts, reason: why)
        let (seconds, atto) = delay.components
        try await store.rescheduleOutbox(id: message.id, attempts: attempts,
                                         notBefore: now().addingTimeInterval(Double(seconds) + Double(atto) / 1e18))
        metrics?.increment("enroute_push_retries_total", labels: ["reason": why.rawValue], help: "Outbox messages put back for a later attempt.")
        return false
    }

    private func complete(_ message: OutboxMessage, result: String) async throws -> Bool {
        try await store.completeOutbox(id: message.id)
        delivered.withLock { _ = $0.removeValue(forKey: message.id) }
        metrics?.increment("enroute_push_outbox_done_total", labels: ["result": result], help: "Outbox messages finished, by result.")
        return true
    }

    private struct Target { let token: String; let environment: APNsEnvironment; let device: DeviceRecord? }

    /// Order updates go to the account's devices as registered now; Live Activity pushes to the
    /// activity's token, on the environment of the account's newest device.
    private func targets(for job: PushJob) async throws -> [Target] {
        let registered = try await devices.devices(accountId: job.accountId)
        switch job.kind {
        case .orderUpdate:
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
            guard let device = target.device, let stage = job.stage else { throw PushPayloadBuilder.BuildError.incomplete("device") }
            return APNsPush(token: target.token, environment: target.environment, pushType: .alert, priority: stage.priority,
                            expiration: job.expiresAt, collapseID: PushPayloadBuilder.collapseID(orderId: job.orderId, stage: stage),
                            apnsID: id, payload: try builder.orderUpdate(job, device: device))
        case .liveActivity:
            return APNsPush(token: target.token, environment: target.environment, pushType: .liveactivity, priority: job.priority ?? 10,
                            expiration: job.expiresAt, collapseID: nil, apnsID: id, payload: try builder.liveActivity(job))
        }
    }

    private func count(_ job: PushJob, _ outcome: PushOutcome) {
        let result: String = switch outcome {
        case .delivered: "delivered"
        case .tokenInvalid: "tokenInvalid"
        case .rejected: "rejected"
        case .retry: "retry"
        }
        metrics?.increment("enroute_push_sends_total", labels: ["kind": job.kind.rawValue, "result": result],
                           help: "Pushes handed to APNs, by kind and outcome.")
    }
}
