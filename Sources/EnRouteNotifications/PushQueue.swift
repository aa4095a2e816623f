public import Foundation
public import EnRouteModels
public import EnRouteDomain
public import EnRouteLogging

/// Writes push jobs into the trip store's outbox for accounts with a registered device, the one door the offer and
/// chat planners share: a job for an account without a device is not written, and a job that cannot be written is
/// logged, never thrown (what it nudges about is already stored or streamed).
public struct PushQueue: Sendable {
    private let store: any TripStore
    private let devices: any DeviceRepository
    private let now: @Sendable () -> Date
    private let queued: @Sendable () -> Void
    private let log: Logger

    /// `queued` runs after each job is written, e.g. to wake the sender rather than wait for its next poll.
    public init(
        store: any TripStore, devices: any DeviceRepository, now: @escaping @Sendable () -> Date,
        queued: @escaping @Sendable () -> Void = {}, log: Logger = .discard
    ) {
        self.store = store; self.devices = devices; self.now = now; self.queued = queued; self.log = log
    }

    /// Queues `job` under outbox id `id` when `account` has a device; `failure` words the log line if it cannot.
    public func enqueue(
        id: String, job: @autoclosure () throws -> PushJob, for account: String, failure: @autoclosure () -> String
    ) async {
        do {
            guard try await !devices.devices(accountId: account).isEmpty else { return }
            let message = OutboxMessage(id: id, topic: PushJob.topic, payload: try job().encoded(), createdAt: now())
            try await store.transaction { tx in try await tx.enqueue(message) }
            queued()
        } catch {
            log.warning("\(failure()): not queued: \(error)")
        }
    }
}
