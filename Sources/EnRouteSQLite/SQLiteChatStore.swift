public import Foundation
public import EnRouteDomain
public import EnRouteModels
import SQLiteClient
import Synchronization

/// Chat on SQLite, in tables of its own (`chat_conversations`, `chat_messages`, migrated by `chat_migrations`) in the
/// trip
/// database, written through the trip store's writer.
public final class SQLiteChatStore: ChatStore, @unchecked Sendable {
    /// Schema migrations of the chat tables, applied in order once each.
    static let migrations: [String] = [
        """
        CREATE TABLE chat_conversations (
            trip_id TEXT PRIMARY KEY, last_seq INTEGER NOT NULL, ended_at REAL, removed_at REAL);
        CREATE TABLE chat_messages (
            trip_id TEXT NOT NULL, seq INTEGER NOT NULL, message_id TEXT NOT NULL, sender TEXT NOT NULL,
            text TEXT NOT NULL, sent_at REAL NOT NULL,
            PRIMARY KEY (trip_id, seq), UNIQUE (trip_id, sender, message_id));
        CREATE INDEX chat_conversations_ended ON chat_conversations(ended_at);
        """
    ]

    private let writer: SQLiteWriter
    private let reader: Mutex<SQLiteDatabase>

    /// Opens (creating if needed) the chat tables in `tripStore`'s database.
    public init(tripStore: SQLiteTripStore, now: @Sendable () -> Date = { Date() }) throws {
        writer = tripStore.writer
        reader = try tripStore.companionReader(migrations: Self.migrations, table: "chat_migrations", appliedAt: now())
    }

    private static let columns = "message_id, trip_id, seq, sender, text, sent_at"

    private static func message(_ row: SQLiteStatement) throws -> ChatMessage {
        guard let from = ChatRole(rawValue: row.text(3) ?? "") else { throw SQLiteChatStoreError.corrupt("sender") }
        return ChatMessage(
            messageId: row.text(0) ?? "", tripId: row.text(1) ?? "", seq: row.int(2), from: from,
            text: row.text(4) ?? "",
            sentAt: Date(timeIntervalSince1970: row.double(5)))
    }

    private static func find(
        _ db: SQLiteDatabase, tripId: String, from: ChatRole, messageId: String
    ) throws -> ChatMessage? {
        try db.query(
            "SELECT \(columns) FROM chat_messages WHERE trip_id = ?1 AND sender = ?2 AND message_id = ?3",
            [.text(tripId), .text(from.rawValue), .text(messageId)], message
        ).first
    }

    public func append(
        tripId: String, messageId: String, from: ChatRole, text: String, at: Date
    ) async throws -> (message: ChatMessage, created: Bool) {
        try await writer.transaction { db in
            if let existing = try Self.find(db, tripId: tripId, from: from, messageId: messageId) {
                return (existing, false)
            }
            let last =
                try db.query("SELECT last_seq FROM chat_conversations WHERE trip_id = ?1", [.text(tripId)]) {
                    $0.int(0)
                }.first ?? 0
            let seq = last + 1
            try db.run(
                "INSERT INTO chat_conversations (trip_id, last_seq) VALUES (?1, ?2) ON CONFLICT(trip_id) DO UPDATE SET "
                    + "last_seq = ?2",
                [.text(tripId), .integer(seq)])
            try db.run(
                "INSERT INTO chat_messages (\(Self.columns)) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                [
                    .text(messageId), .text(tripId), .integer(seq), .text(from.rawValue), .text(text),
                    .real(at.timeIntervalSince1970),
                ])
            return (
                ChatMessage(messageId: messageId, tripId: tripId, seq: seq, from: from, text: text, sentAt: at), true
            )
        }
    }

    public func message(tripId: String, from: ChatRole, messageId: String) async throws -> ChatMessage? {
        try reader.withLock { try Self.find($0, tripId: tripId, from: from, messageId: messageId) }
    }

    public func messages(tripId: String, after: Int64, limit: Int) async throws -> [ChatMessage] {
        try reader.withLock { db in
            try db.query(
                "SELECT \(Self.columns) FROM chat_messages WHERE trip_id = ?1 AND seq > ?2 ORDER BY seq LIMIT ?3",
                [.text(tripId), .integer(after), .integer(Int64(max(0, limit)))], Self.message)
        }
    }

    public func conversation(tripId: String) async throws -> ChatConversation? {
        try reader.withLock { db in
            try db.query(
                "SELECT last_seq, ended_at, removed_at FROM chat_conversations WHERE trip_id = ?1", [.text(tripId)]
            ) { row in
                ChatConversation(
                    tripId: tripId, lastSeq: row.int(0),
                    endedAt: row.isNull(1) ? nil : Date(timeIntervalSince1970: row.double(1)),
                    removedAt: row.isNull(2) ? nil : Date(timeIntervalSince1970: row.double(2)))
            }.first
        }
    }

    public func openConversations() async throws -> [String] {
        try reader.withLock { db in
            try db.query("SELECT trip_id FROM chat_conversations WHERE ended_at IS NULL ORDER BY trip_id") {
                $0.text(0) ?? ""
            }
        }
    }

    public func markEnded(tripId: String, at: Date) async throws {
        try await writer.transaction { db in
            try db.run(
                "UPDATE chat_conversations SET ended_at = ?2 WHERE trip_id = ?1 AND ended_at IS NULL",
                [.text(tripId), .real(at.timeIntervalSince1970)])
        }
    }

    public func conversations(endedBefore cutoff: Date) async throws -> [String] {
        try reader.withLock { db in
            try db.query(
                "SELECT trip_id FROM chat_conversations WHERE removed_at IS NULL AND ended_at < ?1 ORDER BY trip_id",
                [.real(cutoff.timeIntervalSince1970)]
            ) { $0.text(0) ?? "" }
        }
    }

    public func remove(tripId: String, at: Date) async throws {
        try await writer.transaction { db in
            try db.run("DELETE FROM chat_messages WHERE trip_id = ?1", [.text(tripId)])
            try db.run(
                "UPDATE chat_conversations SET removed_at = ?2 WHERE trip_id = ?1",
                [.text(tripId), .real(at.timeIntervalSince1970)])
        }
    }
}

/// A chat row the store cannot read back.
enum SQLiteChatStoreError: Error { case corrupt(String) }
