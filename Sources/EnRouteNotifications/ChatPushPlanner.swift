public import Foundation
public import EnRouteModels
public import EnRouteDomain

/// Puts a chat message in the push outbox for a recipient with no chat socket open and a registered device: a
/// `CHAT_MESSAGE` alert whose text is sealed to each device's key at send time, collapsed per trip.
public struct ChatPushPlanner: ChatNotifier {
    private let queue: PushQueue

    /// A planner writing through `queue`.
    public init(queue: PushQueue) { self.queue = queue }

    public func deliverOffline(_ message: ChatMessage, to recipient: String) async {
        // The message is stored and the recipient reads it on opening the chat; only the nudge can be lost.
        await queue.enqueue(
            id: "apns.chat.\(message.tripId).\(message.seq)", job: try PushJob.chat(message, to: recipient),
            for: recipient, failure: "chat push for trip \(message.tripId) #\(message.seq)")
    }
}
