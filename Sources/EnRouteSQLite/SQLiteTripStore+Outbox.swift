public import Foundation
public import EnRouteDomain
import EnRouteModels
import SQLiteClient
import Synchronization

/// The outbox (claimed and relayed in order) and the leases that say which node relays.
extension SQLiteTripStore {
    public func dueOutbox(topic: String, now: Date, limit: Int) async throws -> [OutboxMessage] {
        try reader.withLock { db in try Self.due(db, topic: topic, now: now, limit: limit) }
    }

    /// The oldest due messages, read along `outbox_oldest` (`+not_before` keeps the planner off `outbox_due`, which
    /// would sort every due message to hand out the first few).
    static let dueSQL = """
        SELECT id, payload, created_at, attempts, not_before FROM outbox
        WHERE topic = ?1 AND +not_before <= ?2 ORDER BY created_at, id LIMIT ?3
        """

    static func due(_ db: SQLiteDatabase, topic: String, now: Date, limit: Int) throws -> [OutboxMessage] {
        try db.query(dueSQL, [.text(topic), .real(now.timeIntervalSince1970), .integer(Int64(limit))]) { row in
            OutboxMessage(
                id: row.text(0) ?? "", topic: topic, payload: row.blob(1),
                createdAt: Date(timeIntervalSince1970: row.double(2)),
                attempts: Int(row.int(3)), notBefore: Date(timeIntervalSince1970: row.double(4)))
        }
    }

    public func claimOutbox(topic: String, now: Date, until: Date, limit: Int) async throws -> [OutboxMessage] {
        try await write { db in
            // One write transaction: no other writer can take the same rows between the read and the update.
            try Self.due(db, topic: topic, now: now, limit: limit).map { message in
                try db.run(
                    "UPDATE outbox SET not_before = ?2 WHERE id = ?1",
                    [.text(message.id), .real(until.timeIntervalSince1970)])
                var claimed = message
                claimed.notBefore = until
                return claimed
            }
        }
    }

    public func completeOutbox(id: String) async throws {
        try await write { db in try db.run("DELETE FROM outbox WHERE id = ?1", [.text(id)]) }
    }

    public func rescheduleOutbox(id: String, attempts: Int, notBefore: Date) async throws {
        try await write { db in
            try db.run(
                "UPDATE outbox SET attempts = ?2, not_before = ?3 WHERE id = ?1",
                [.text(id), .integer(Int64(attempts)), .real(notBefore.timeIntervalSince1970)])
        }
    }

    public func claimLease(_ name: String, node: String, until: Date, now: Date) async throws -> Bool {
        try await write { db in
            try db.run(
                """
                INSERT INTO leases (name, holder, expires_at) VALUES (?1, ?2, ?3)
                ON CONFLICT(name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
                WHERE leases.holder IS NULL OR leases.holder = excluded.holder OR leases.expires_at < ?4
                """, [.text(name), .text(node), .real(until.timeIntervalSince1970), .real(now.timeIntervalSince1970)])
            return db.changes == 1
        }
    }

    public func releaseLease(_ name: String, node: String) async throws {
        try await write { db in
            try db.run("UPDATE leases SET holder = NULL WHERE name = ?1 AND holder = ?2", [.text(name), .text(node)])
        }
    }

    public func relayOutbox(
        topic: String, city: String, lease name: String, node: String, now: Date, limit: Int
    ) async throws -> [OutboxMessage]? {
        try await write { db in
            // One write transaction: no other node can take the lease or stamp between the check and the stamps.
            guard
                var stamped = try db.query(
                    "SELECT stamped FROM leases WHERE name = ?1 AND holder = ?2 AND expires_at >= ?3",
                    [.text(name), .text(node), .real(now.timeIntervalSince1970)], { $0.int(0) }
                ).first
            else { return nil }
            let due = try db.query(
                """
                SELECT id FROM outbox WHERE topic = ?1 AND city = ?2 AND relay_seq IS NULL AND not_before <= ?3 \
                ORDER BY rowid
                """, [.text(topic), .text(city), .real(now.timeIntervalSince1970)]
            ) { $0.text(0) ?? "" }
            for id in due {
                stamped += 1
                try db.run("UPDATE outbox SET relay_seq = ?2 WHERE id = ?1", [.text(id), .integer(stamped)])
            }
            if !due.isEmpty {
                try db.run("UPDATE leases SET stamped = ?2 WHERE name = ?1", [.text(name), .integer(stamped)])
            }
            return try db.query(
                """
                SELECT id, payload, created_at, attempts, not_before, relay_seq FROM outbox
                WHERE topic = ?1 AND city = ?2 AND relay_seq IS NOT NULL ORDER BY relay_seq LIMIT ?3
                """, [.text(topic), .text(city), .integer(Int64(limit))]
            ) { row in
                OutboxMessage(
                    id: row.text(0) ?? "", topic: topic, payload: row.blob(1),
                    createdAt: Date(timeIntervalSince1970: row.double(2)),
                    attempts: Int(row.int(3)), notBefore: Date(timeIntervalSince1970: row.double(4)), city: city,
                    sequence: UInt64(row.int(5)))
            }
        }
    }
}
