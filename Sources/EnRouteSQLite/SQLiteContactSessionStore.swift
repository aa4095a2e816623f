public import Foundation
public import EnRouteDomain
import EnRouteModels
import SQLiteClient
import Synchronization

/// Relay sessions on SQLite (`contact_sessions`, migrated by `contact_session_migrations`) in the trip database,
/// written
/// through the trip store's writer: a restart reuses a trip's session and still closes it on time.
public final class SQLiteContactSessionStore: ContactSessionStore, @unchecked Sendable {
    /// Schema migrations of the sessions table, applied in order once each.
    static let migrations: [String] = [
        """
        CREATE TABLE contact_sessions (
            relay_session_id TEXT PRIMARY KEY, trip_id TEXT NOT NULL, opened_at REAL NOT NULL, closed_at REAL, record \
        BLOB NOT NULL);
        CREATE INDEX contact_sessions_open ON contact_sessions(trip_id) WHERE closed_at IS NULL;
        """
    ]

    private let writer: SQLiteWriter
    private let reader: Mutex<SQLiteDatabase>

    /// Opens (creating if needed) the sessions table in `tripStore`'s database.
    public init(tripStore: SQLiteTripStore, now: @Sendable () -> Date = { Date() }) throws {
        writer = tripStore.writer
        reader = try tripStore.companionReader(
            migrations: Self.migrations, table: "contact_session_migrations", appliedAt: now())
    }

    public func openSession(tripId: String) async throws -> ContactSession? {
        try reader.withLock { db in
            try db.query(
                "SELECT record FROM contact_sessions WHERE trip_id = ?1 AND closed_at IS NULL ORDER BY opened_at "
                    + "DESC LIMIT 1",
                [.text(tripId)]
            ) { try Self.decode($0.blob(0)) }.first
        }
    }

    public func openSessions() async throws -> [ContactSession] {
        try reader.withLock { db in
            try db.query("SELECT record FROM contact_sessions WHERE closed_at IS NULL ORDER BY relay_session_id", []) {
                try Self.decode($0.blob(0))
            }
        }
    }

    public func save(_ session: ContactSession) async throws {
        let record = Array(try WireCoding.encoder().encode(session))
        try await writer.transaction { db in
            try db.run(
                """
                INSERT OR REPLACE INTO contact_sessions (relay_session_id, trip_id, opened_at, closed_at, record) \
                VALUES (?1, ?2, ?3, ?4, ?5)
                """,
                [
                    .text(session.relaySessionId), .text(session.tripId), .real(session.openedAt.timeIntervalSince1970),
                    session.closedAt.map { .real($0.timeIntervalSince1970) } ?? .null, .blob(record),
                ])
        }
    }

    private static func decode(_ blob: [UInt8]) throws -> ContactSession {
        try WireCoding.decoder().decode(ContactSession.self, from: Data(blob))
    }
}
