public import Foundation
public import EnRouteModels

/// One trip's conversation as stored: its last sequence, and when it ended and was removed.
public struct ChatConversation: Sendable, Equatable {
    public let tripId: String
    public var lastSeq: Int64
    /// When the trip ended, once the chat service has seen it end.
    public var endedAt: Date?
    /// When the messages were removed for the parties.
    public var removedAt: Date?
    public init(tripId: String, lastSeq: Int64, endedAt: Date? = nil, removedAt: Date? = nil) {
        self.tripId = tripId; self.lastSeq = lastSeq; self.endedAt = endedAt; self.removedAt = removedAt
    }
}

/// Where chat messages live: one conversation per trip, sequenced by the store.
public protocol ChatStore: Sendable {
    /// Stores a message as the trip's next sequence unless `from` already stored `messageId` on this trip; returns the
    /// stored message (the earlier one on a resend) and whether it is new. Atomic: two racing sends store one.
    func append(
        tripId: String, messageId: String, from: ChatRole, text: String, at: Date
    ) async throws -> (message: ChatMessage, created: Bool)
    /// The message `from` stored under `messageId` on the trip, if any.
    func message(tripId: String, from: ChatRole, messageId: String) async throws -> ChatMessage?
    /// Up to `limit` messages with a sequence above `after`, in order.
    func messages(tripId: String, after: Int64, limit: Int) async throws -> [ChatMessage]
    /// The trip's conversation; nil when nobody wrote in it.
    func conversation(tripId: String) async throws -> ChatConversation?
    /// Conversations whose end is not recorded yet, by trip id.
    func openConversations() async throws -> [String]
    /// Records the trip's end on its conversation (once; a later call keeps the first time).
    func markEnded(tripId: String, at: Date) async throws
    /// Conversations that ended before `cutoff` and still hold their messages.
    func conversations(endedBefore cutoff: Date) async throws -> [String]
    /// Deletes the conversation's messages and records when.
    func remove(tripId: String, at: Date) async throws
}
