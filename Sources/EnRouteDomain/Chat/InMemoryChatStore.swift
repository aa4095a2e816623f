public import Foundation
public import EnRouteModels
import Synchronization

/// Chat in memory (tests, `--store memory`).
public final class InMemoryChatStore: ChatStore {
    private struct Conversation {
        var summary: ChatConversation
        var messages: [ChatMessage] = []
    }
    private let conversations = Mutex<[String: Conversation]>([:])

    public init() {}

    public func append(
        tripId: String, messageId: String, from: ChatRole, text: String, at: Date
    ) async throws -> (message: ChatMessage, created: Bool) {
        conversations.withLock { all in
            var c = all[tripId] ?? Conversation(summary: ChatConversation(tripId: tripId, lastSeq: 0))
            if let existing = c.messages.first(where: { $0.from == from && $0.messageId == messageId }) {
                return (existing, false)
            }
            c.summary.lastSeq += 1
            let message = ChatMessage(
                messageId: messageId, tripId: tripId, seq: c.summary.lastSeq, from: from, text: text, sentAt: at)
            c.messages.append(message)
            all[tripId] = c
            return (message, true)
        }
    }

    public func message(tripId: String, from: ChatRole, messageId: String) async throws -> ChatMessage? {
        conversations.withLock { $0[tripId]?.messages.first { $0.from == from && $0.messageId == messageId } }
    }

    public func messages(tripId: String, after: Int64, limit: Int) async throws -> [ChatMessage] {
        conversations.withLock { Array(($0[tripId]?.messages ?? []).filter { $0.seq > after }.prefix(max(0, limit))) }
    }

    public func conversation(tripId: String) async throws -> ChatConversation? {
        conversations.withLock { $0[tripId]?.summary }
    }

    public func openConversations() async throws -> [String] {
        conversations.withLock { $0.values.filter { $0.summary.endedAt == nil }.map(\.summary.tripId).sorted() }
    }

    public func markEnded(tripId: String, at: Date) async throws {
        conversations.withLock { all in
            guard all[tripId] != nil, all[tripId]?.summary.endedAt == nil else { return }
            all[tripId]?.summary.endedAt = at
        }
    }

    public func conversations(endedBefore cutoff: Date) async throws -> [String] {
        conversations.withLock { all in
            all.values.filter { c in c.summary.removedAt == nil && (c.summary.endedAt.map { $0 < cutoff } ?? false) }
                .map(\.summary.tripId).sorted()
        }
    }

    public func remove(tripId: String, at: Date) async throws {
        conversations.withLock { all in
            guard all[tripId] != nil else { return }
            all[tripId]?.messages = []
            all[tripId]?.summary.removedAt = at
        }
    }
}
