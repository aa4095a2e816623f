public import Foundation
public import EnRouteDomain
import EnRouteModels
import PostgresClient

/// Relay sessions on PostgreSQL (`contact_sessions`, migrated by `contact_session_migrations`), on the trip store's
/// connections: a restart reuses a trip's session and still closes it on time.
public final class PostgresContactSessionStore: ContactSessionStore, Sendable {
    /// Schema migrations of the sessions table, applied in order once each.
    static let migrations: [String] = [
        """
        CREATE TABLE contact_sessions (
            relay_session_id TEXT COLLATE "C" PRIMARY KEY, trip_id TEXT NOT NULL, opened_at DOUBLE PRECISION NOT NULL,
            closed_at DOUBLE PRECISION, record BYTEA NOT NULL);
        CREATE INDEX contact_sessions_open ON contact_sessions(trip_id) WHERE closed_at IS NULL;
        """
    ]

    private let store: PostgresTripStore

    /// Opens (creating if needed) the sessions table in `tripStore`'s database.
    public init(tripStore: PostgresTripStore, now: @Sendable () -> Date = { Date() }) throws {
        store = tripStore
        try store.migrateCompanion(Self.migrations, table: "contact_session_migrations", appliedAt: now())
    }

    public func openSession(tripId: String) async throws -> ContactSession? {
        try await store.perform { db in
            try db.query(
                "SELECT record FROM contact_sessions WHERE trip_id = $1 AND closed_at IS NULL ORDER BY opened_at "
                    + "DESC LIMIT 1",
                [.text(tripId)]
            ).first.map { try Self.decode($0.bytes(0)) }
        }
    }

    public func openSessions() async throws -> [ContactSession] {
        try await store.perform { db in
            try db.query("SELECT record FROM contact_sessions WHERE closed_at IS NULL ORDER BY relay_session_id").map {
                try Self.decode($0.bytes(0))
            }
        }
    }

    public func save(_ session: ContactSession) async throws {
        let values: [PostgresValue] = [
            .text(session.relaySessionId), .text(session.tripId), seconds(session.openedAt), seconds(session.closedAt),
            .bytea(Array(try WireCoding.encoder().encode(session))),
        ]
        try await store.perform { db in
            try db.run(
                """
                INSERT INTO contact_sessions (relay_session_id, trip_id, opened_at, closed_at, record) VALUES ($1, \
                $2, $3, $4, $5)
                ON CONFLICT (relay_session_id) DO UPDATE SET trip_id = EXCLUDED.trip_id, opened_at = EXCLUDED.opened_at,
                closed_at = EXCLUDED.closed_at, record = EXCLUDED.record
                """, values)
        }
    }

    private static func decode(_ bytes: [UInt8]) throws -> ContactSession {
        try WireCoding.decoder().decode(ContactSession.self, from: Data(bytes))
    }
}
