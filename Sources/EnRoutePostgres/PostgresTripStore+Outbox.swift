public import Foundation
public import EnRouteDomain
import EnRouteModels
public import PostgresClient

/// The outbox (claimed and relayed in order) and the leases that say which node relays.
extension PostgresTripStore {
    public func dueOutbox(topic: String, now: Date, limit: Int) async throws -> [OutboxMessage] {
        try await write { db in
            try db.query(
                """
                SELECT id, payload, created_at, attempts, not_before FROM outbox
                WHERE topic = $1 AND not_before <= $2 ORDER BY created_at, id LIMIT $3
                """, [.text(topic), .double(now.timeIntervalSince1970), .int(limit)]
            ).map { Self.outboxMessage($0, topic: topic) }
        }
    }

    /// A row of `id, payload, created_at, attempts, not_before` from the outbox.
    static func outboxMessage(_ row: PostgresRow, topic: String) -> OutboxMessage {
        OutboxMessage(
            id: row.text(0) ?? "", topic: topic, payload: row.bytes(1),
            createdAt: Date(timeIntervalSince1970: row.double(2)),
            attempts: Int(row.int(3)), notBefore: Date(timeIntervalSince1970: row.double(4)))
    }

    public func claimOutbox(topic: String, now: Date, until: Date, limit: Int) async throws -> [OutboxMessage] {
        try await write { db in
            // Rows another node is claiming at this moment are skipped, not waited for.
            try db.query(
                """
                UPDATE outbox SET not_before = $4 WHERE id IN (
                    SELECT id FROM outbox WHERE topic = $1 AND not_before <= $2
                    ORDER BY created_at, id LIMIT $3 FOR UPDATE SKIP LOCKED)
                RETURNING id, payload, created_at, attempts, not_before
                """,
                [.text(topic), .double(now.timeIntervalSince1970), .int(limit), .double(until.timeIntervalSince1970)]
            )
            .map { Self.outboxMessage($0, topic: topic) }
            .sorted { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) }
        }
    }

    public func completeOutbox(id: String) async throws {
        try await write { db in _ = try db.run("DELETE FROM outbox WHERE id = $1", [.text(id)]) }
    }

    public func rescheduleOutbox(id: String, attempts: Int, notBefore: Date) async throws {
        try await write { db in
            _ = try db.run(
                "UPDATE outbox SET attempts = $2, not_before = $3 WHERE id = $1",
                [.text(id), .int(attempts), .double(notBefore.timeIntervalSince1970)])
        }
    }

    /// SQL for the instant a lease is judged at: the database's clock, or the parameter `$n` (seconds).
    func leaseInstant(_ n: Int) -> String {
        databaseClock ? "extract(epoch FROM clock_timestamp())" : "$\(n)::double precision"
    }

    // A node stopped (`kill -STOP`) while it touches a lease must not keep the others waiting on the lease row: claims
    // and releases are single statements outside any explicit transaction, and the stamping transaction ends the
    // session if it is left idle for two seconds (the node finds its connection gone when it resumes).

    public func claimLease(_ name: String, node: String, until: Date, now: Date) async throws -> Bool {
        // With the database's clock, `until` keeps its distance from `now` on that clock.
        let ends =
            databaseClock ? "extract(epoch FROM clock_timestamp()) + $3::double precision" : "$3::double precision"
        let values: [PostgresValue] =
            [
                .text(name), .text(node),
                databaseClock ? .double(until.timeIntervalSince(now)) : .double(until.timeIntervalSince1970),
            ]
            + (databaseClock ? [] : [.double(now.timeIntervalSince1970)])
        let at = leaseInstant(4)
        return try await perform { db in
            try db.run(
                """
                INSERT INTO leases AS held (name, holder, expires_at) VALUES ($1, $2, \(ends))
                ON CONFLICT (name) DO UPDATE SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at
                WHERE held.holder IS NULL OR held.holder = EXCLUDED.holder OR held.expires_at < \(at)
                """, values) == 1
        }
    }

    public func releaseLease(_ name: String, node: String) async throws {
        try await perform { db in
            _ = try db.run(
                "UPDATE leases SET holder = NULL WHERE name = $1 AND holder = $2", [.text(name), .text(node)])
        }
    }

    public func relayOutbox(
        topic: String, city: String, lease name: String, node: String, now: Date, limit: Int
    ) async throws -> [OutboxMessage]? {
        let at = leaseInstant(3), databaseClock = self.databaseClock
        return try await write { db in
            try db.execute("SET LOCAL idle_in_transaction_session_timeout = '2s'")
            // The lease row stays locked to the commit: a node taking the lease over waits for these stamps, and a
            // holder whose lease was taken finds no row here and stamps nothing.
            guard
                let held = try db.query(
                    "SELECT stamped FROM leases WHERE name = $1 AND holder = $2 AND expires_at >= \(at) FOR UPDATE",
                    [.text(name), .text(node)] + (databaseClock ? [] : [.double(now.timeIntervalSince1970)])
                ).first
            else {
                return nil
            }
            // Every row this statement sees committed (its snapshot is taken after the lock), in insert order; a row
            // whose commit lands later (its `seq` taken earlier) is stamped on a later pass with a later number, never
            // skipped.
            let stamps = try db.query(
                """
                WITH due AS (SELECT id, seq FROM outbox WHERE topic = $1 AND city = $2 AND relay_seq IS NULL AND \
                not_before <= $3),
                     numbered AS (SELECT id, $4::bigint + row_number() OVER (ORDER BY seq) AS n FROM due)
                UPDATE outbox SET relay_seq = numbered.n FROM numbered WHERE outbox.id = numbered.id \
                RETURNING numbered.n
                """, [.text(topic), .text(city), .double(now.timeIntervalSince1970), .int(held.int(0))]
            ).map { $0.int(0) }
            if let last = stamps.max() {
                _ = try db.run("UPDATE leases SET stamped = $2 WHERE name = $1", [.text(name), .int(last)])
            }
            return try db.query(
                """
                SELECT id, payload, created_at, attempts, not_before, relay_seq FROM outbox
                WHERE topic = $1 AND city = $2 AND relay_seq IS NOT NULL ORDER BY relay_seq LIMIT $3
                """, [.text(topic), .text(city), .int(limit)]
            ).map { row in
                var message = Self.outboxMessage(row, topic: topic)
                message.city = city
                message.sequence = UInt64(row.int(5))
                return message
            }
        }
    }
}
