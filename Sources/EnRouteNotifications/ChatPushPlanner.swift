public import Foundation
public import EnRouteModels
public import EnRouteDomain

/// Puts a chat message in the push outbox for a recipient with no chat socket open and a registered device (issue 15):
/// a `CHAT_MESSAGE` alert whose text is sealed to each device's key at send time, collapsed per trip.
public struct ChatPushPlanner: ChatNotifier {
    private let store: any TripStore
    private let devices: any DeviceRepository
    private let now: @Sendable () -> Date
    private let queued: @Sendable () -> Void
    private let log: @Sendable (String) -> Void

    /// `queued` runs after each job is written, e.g. to wake the sender rather than wait for its next poll.
    public init(store: any TripStore, devices: any DeviceRepository, now: @escaping @Sendable () -> Date,
                queued: @escaping @Sendable () -> Void = {}, log: @escaping @Sendable (String) -> Void = { _ in }) {
        self.store = store; self.devices = devices; self.now = now; self.queued = queued; self.log = log
    }

    public func deliverOffline(_ message: ChatMessage, to recipient: String) async {
        do {
            guard try await !devices.devices(accountId: recipient).isEmpty else { return }
            let outbox = OutboxMessage(id: "apns.chat.\(message.tripId).\(message.seq)", topic: PushJob.topic,
                                       payload: try PushJob.chat(message, to: recipient).encoded(), createdAt: now())
            try await store.transaction { tx in try await tx.enqueue(outbox) }
            queued()
        } catch {
            // The message is stored and the recipient reads it on opening the chat; only the nudge is lost.
            log("chat push for trip \(message.tripId) #\(message.seq): not queued: \(error)")
        }
    }
}
