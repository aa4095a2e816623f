public import Foundation
public import EnRouteDomain
public import EnRouteModels
import PostgresClient

/// Chat on PostgreSQL (`chat_conversations`, `chat_messages`, migrated by `chat_migrations`), on the trip store's
/// connections. An append holds the trip's row lock on its conversation, so racing sends get consecutive sequences and
/// a
/// resend of one message id is stored once.
public final class PostgresChatStore: ChatStore, Sendable {
    /// Schema migrations of the chat tables, applied in order once each.
    static let migrations: [String] = [
        """
        CREATE TABLE chat_conversations (
            trip_id TEXT COLLATE "C" PRIMARY KEY, last_seq BIGINT NOT NULL, ended_at DOUBLE PRECISION, removed_at \
        DOUBLE PRECISION);
        CREATE TABLE chat_messages (
            trip_id TEXT NOT NULL, seq BIGINT NOT NULL, message_id TEXT NOT NULL, sender TEXT NOT NULL,
            text TEXT NOT NULL, sent_at DOUBLE PRECISION NOT NULL,
            PRIMARY KEY (trip_id, seq), UNIQUE (trip_id, sender, message_id));
        CREATE INDEX chat_conversations_ended ON chat_conversations(ended_at);
        """
    ]

    private let store: PostgresTripStore

    /// Opens (creating if needed) the chat tables in `tripStore`'s database.
    public init(tripStore: PostgresTripStore, now: @Sendable () -> Date = { Date() }) throws {
        store = tripStore
        try store.migrateCompanion(Self.migrations, table: "chat_migrations", appliedAt: now())
    }

    private static let columns = "message_id, trip_id, seq, sender, text, sent_at"

    private static func message(_ row: PostgresRow) throws -> ChatMessage {
        guard let from = ChatRole(rawValue: row.text(3) ?? "") else {
            throw PostgresError(sqlState: "XX001", message: "a chat row's sender is unreadable")
        }
        return ChatMessage(
            messageId: row.text(0) ?? "", tripId: row.text(1) ?? "", seq: row.int(2), from: from,
            text: row.text(4) ?? "",
            sentAt: Date(timeIntervalSince1970: row.double(5)))
    }

    private static func find(
        _ db: PostgresConnection, tripId: String, from: ChatRole, messageId: String
    ) throws -> ChatMessage? {
        try db.query(
            "SELECT \(columns) FROM chat_messages WHERE trip_id = $1 AND sender = $2 AND message_id = $3",
            [.text(tripId), .text(from.rawValue), .text(messageId)]
        ).first.map(message)
    }

    public func append(
        tripId: String, messageId: String, from: ChatRole, text: String, at: Date
    ) async throws -> (message: ChatMessage, created: Bool) {
        let sent = seconds(at)
        let (seq, existing) = try await store.write(locking: "chat:" + tripId) { db -> (Int64, ChatMessage?) in
            if let existing = try Self.find(db, tripId: tripId, from: from, messageId: messageId) {
                return (existing.seq, existing)
            }
            let seq =
                try db.query(
                    """
                    INSERT INTO chat_conversations (trip_id, last_seq) VALUES ($1, 1)
                    ON CONFLICT (trip_id) DO UPDATE SET last_seq = chat_conversations.last_seq + 1 RETURNING last_seq
                    """, [.text(tripId)]
                ).first?.int(0) ?? 1
            try db.run(
                "INSERT INTO chat_messages (\(Self.columns)) VALUES ($1, $2, $3, $4, $5, $6)",
                [.text(messageId), .text(tripId), .int(seq), .text(from.rawValue), .text(text), sent])
            return (seq, nil)
        }
        if let existing { return (existing, false) }
        return (ChatMessage(messageId: messageId, tripId: tripId, seq: seq, from: from, text: text, sentAt: at), true)
    }

    public func message(tripId: String, from: ChatRole, messageId: String) async throws -> ChatMessage? {
        try await store.perform { try Self.find($0, tripId: tripId, from: from, messageId: messageId) }
    }

    public func messages(tripId: String, after: Int64, limit: Int) async throws -> [ChatMessage] {
        try await store.perform { db in
            try db.query(
                "SELECT \(Self.columns) FROM chat_messages WHERE trip_id = $1 AND seq > $2 ORDER BY seq LIMIT $3",
                [.text(tripId), .int(after), .int(max(0, limit))]
            ).map(Self.message)
        }
    }

    public func conversation(tripId: String) async throws -> ChatConversation? {
        try await store.perform { db in
            try db.query(
                "SELECT last_seq, ended_at, removed_at FROM chat_conversations WHERE trip_id = $1", [.text(tripId)]
            ).first.map { row in
                ChatConversation(tripId: tripId, lastSeq: row.int(0), endedAt: date(row, 1), removedAt: date(row, 2))
            }
        }
    }

    public func openConversations() async throws -> [String] {
        try await store.perform { db in
            try db.query("SELECT trip_id FROM chat_conversations WHERE ended_at IS NULL ORDER BY trip_id").map {
                $0.text(0) ?? ""
            }
        }
    }

    public func markEnded(tripId: String, at: Date) async throws {
        try await store.perform { db in
            try db.run(
                "UPDATE chat_conversations SET ended_at = $2 WHERE trip_id = $1 AND ended_at IS NULL",
                [.text(tripId), seconds(at)])
        }
    }

    public func conversations(endedBefore cutoff: Date) async throws -> [String] {
        try await store.perform { db in
            try db.query(
                "SELECT trip_id FROM chat_conversations WHERE removed_at IS NULL AND ended_at < $1 ORDER BY trip_id",
                [seconds(cutoff)]
            ).map { $0.text(0) ?? "" }
        }
    }

    public func remove(tripId: String, at: Date) async throws {
        try await store.write(locking: "chat:" + tripId) { db in
            try db.run("DELETE FROM chat_messages WHERE trip_id = $1", [.text(tripId)])
            try db.run(
                "UPDATE chat_conversations SET removed_at = $2 WHERE trip_id = $1", [.text(tripId), seconds(at)])
        }
    }
}
