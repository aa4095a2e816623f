public import Foundation

/// The two parties who write in a trip's chat.
public enum ChatRole: String, Codable, Sendable, CaseIterable {
    case customer, provider

    /// The party on the other end of the conversation.
    public var other: ChatRole { self == .customer ? .provider : .customer }
}

/// One stored chat message: the client's `messageId`, the server's `seq` (per trip, from 1) and who wrote it.
public struct ChatMessage: Codable, Sendable, Equatable, Identifiable {
    public let messageId: String
    public let tripId: String
    public let seq: Int64
    public let from: ChatRole
    public let text: String
    public let sentAt: Date
    public var id: String { messageId }

    public init(messageId: String, tripId: String, seq: Int64, from: ChatRole, text: String, sentAt: Date) {
        self.messageId = messageId; self.tripId = tripId; self.seq = seq; self.from = from; self.text = text;
        self.sentAt = sentAt
    }
}

/// `POST /v1/trips/{id}/messages`: the client makes `messageId`, so sending it again is idempotent.
public struct ChatMessageRequest: Codable, Sendable, Equatable {
    public let messageId: String
    public let text: String
    public init(messageId: String, text: String) { self.messageId = messageId; self.text = text }
}

/// `GET /v1/trips/{id}/messages?after=`: messages after a sequence, in order, and whether the conversation is closed.
public struct ChatHistory: Codable, Sendable, Equatable {
    public let tripId: String
    public let messages: [ChatMessage]
    /// True once the trip has ended: reading only, no new messages.
    public let closed: Bool
    /// Why it is closed, in words (nil while open).
    public let reason: String?
    /// When the messages are removed for the parties (nil while open or when already removed).
    public let removesAt: Date?
    /// True when more messages follow the last one here: ask again with `after` set to its `seq`.
    public let hasMore: Bool

    public init(
        tripId: String, messages: [ChatMessage], closed: Bool, reason: String?, removesAt: Date?, hasMore: Bool = false
    ) {
        self.tripId = tripId; self.messages = messages; self.closed = closed; self.reason = reason;
        self.removesAt = removesAt
        self.hasMore = hasMore
    }
}

/// The frames of `GET /v1/trips/{id}/chat` (a WebSocket), each one JSON text message with a `type`.
///
/// A client sends `send`, `typing`, `delivered` and `read`; the server sends `message` (every new message, the
/// sender's own included, which is its acknowledgement), `typing`, `delivered` and `read` from the other party
/// (`from` set), `error` (a refused frame, with the same problem the REST route answers) and `closed`.
public enum ChatFrame: Sendable, Equatable, Codable {
    /// Client: write a message.
    case send(messageId: String, text: String)
    /// Server: a stored message.
    case message(ChatMessage)
    /// Typing now; the server fills in `from`.
    case typing(from: ChatRole?)
    /// Messages up to `seq` reached the party's device; the server fills in `from`.
    case delivered(seq: Int64, from: ChatRole?)
    /// Messages up to `seq` were shown to the party; the server fills in `from`.
    case read(seq: Int64, from: ChatRole?)
    /// Server: a frame was refused; `messageId` names the message when it was a `send`.
    case error(Problem, messageId: String?)
    /// Server: the conversation closed (the trip ended); the socket closes after it.
    case closed(reason: String)

    private enum CodingKeys: String, CodingKey { case type, messageId, text, message, from, seq, problem, reason }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        switch try c.decode(String.self, forKey: .type) {
        case "send":
            self = .send(
                messageId: try c.decode(String.self, forKey: .messageId), text: try c.decode(String.self, forKey: .text)
            )
        case "message": self = .message(try c.decode(ChatMessage.self, forKey: .message))
        case "typing": self = .typing(from: try c.decodeIfPresent(ChatRole.self, forKey: .from))
        case "delivered":
            self = .delivered(
                seq: try c.decode(Int64.self, forKey: .seq), from: try c.decodeIfPresent(ChatRole.self, forKey: .from))
        case "read":
            self = .read(
                seq: try c.decode(Int64.self, forKey: .seq), from: try c.decodeIfPresent(ChatRole.self, forKey: .from))
        case "error":
            self = .error(
                try c.decode(Problem.self, forKey: .problem),
                messageId: try c.decodeIfPresent(String.self, forKey: .messageId))
        case "closed": self = .closed(reason: try c.decode(String.self, forKey: .reason))
        case let other:
            throw DecodingError.dataCorruptedError(
                forKey: .type, in: c, debugDescription: "unknown chat frame type \(other)")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .send(let id, let text):
            try c.encode("send", forKey: .type); try c.encode(id, forKey: .messageId); try c.encode(text, forKey: .text)
        case .message(let m): try c.encode("message", forKey: .type); try c.encode(m, forKey: .message)
        case .typing(let from): try c.encode("typing", forKey: .type); try c.encodeIfPresent(from, forKey: .from)
        case .delivered(let seq, let from):
            try c.encode("delivered", forKey: .type); try c.encode(seq, forKey: .seq);
            try c.encodeIfPresent(from, forKey: .from)
        case .read(let seq, let from):
            try c.encode("read", forKey: .type); try c.encode(seq, forKey: .seq);
            try c.encodeIfPresent(from, forKey: .from)
        case .error(let problem, let id):
            try c.encode("error", forKey: .type); try c.encode(problem, forKey: .problem);
            try c.encodeIfPresent(id, forKey: .messageId)
        case .closed(let reason): try c.encode("closed", forKey: .type); try c.encode(reason, forKey: .reason)
        }
    }

    /// The frame as one WebSocket text message.
    public func text() throws -> String { String(decoding: try WireCoding.encoder().encode(self), as: UTF8.self) }

    /// Reads one WebSocket text message.
    public static func decode(_ text: String) throws -> ChatFrame {
        try WireCoding.decoder().decode(ChatFrame.self, from: Data(text.utf8))
    }
}
