public import Foundation
import EnRouteModels

/// One line of the conversation as the chat screen shows it.
public struct ChatLine: Sendable, Equatable, Identifiable {
    /// Where a line stands.
    public enum Status: Sendable, Equatable {
        /// Mine, in the outbox, on its way.
        case sending
        /// Mine, in the outbox after a failed attempt: it is sent again (with the same id) by itself.
        case waiting
        /// Stored by the server (mine), or received (theirs).
        case sent
        /// Mine, on the other party's device.
        case delivered
        /// Mine, seen by the other party.
        case read
        /// Mine, refused for good (too long, the conversation closed...), with the reason in words.
        case refused(String)
    }

    public let messageId: String
    public let mine: Bool
    public let text: String
    /// The server's order; nil until stored.
    public var seq: Int64?
    public var sentAt: Date?
    public var status: Status
    public var id: String { (mine ? "me:" : "them:") + messageId }

    public init(messageId: String, mine: Bool, text: String, seq: Int64? = nil, sentAt: Date? = nil, status: Status) {
        self.messageId = messageId; self.mine = mine; self.text = text; self.seq = seq; self.sentAt = sentAt;
        self.status = status
    }
}

/// What the chat screen shows: the lines in order, whether the other party types, and whether writing is possible.
public struct ChatViewState: Sendable, Equatable {
    /// Stored lines by sequence, then the outbox's in the order written.
    public var lines: [ChatLine] = []
    public var otherIsTyping = false
    /// Set once the conversation closed (the trip ended): the composer and the contact controls go.
    public var closedReason: String?
    /// True while the live socket is open.
    public var isLive = false
    /// Set when the server refuses this account the conversation (not its trip, signed out): nothing to show or write.
    public var unavailableReason: String?

    public init() {}

    /// The composer shows only while the conversation is open.
    public var showsComposer: Bool { closedReason == nil && unavailableReason == nil }
    /// Messages still in the outbox.
    public var pendingCount: Int { lines.filter { $0.status == .sending || $0.status == .waiting }.count }
}
