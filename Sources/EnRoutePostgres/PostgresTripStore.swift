public import Foundation
public import EnRouteDomain
import EnRouteModels
public import PostgresClient

/// The trip store on PostgreSQL: concurrent `REPEATABLE READ` transactions over a pool of connections, the
/// invariants enforced by the database itself.
///
/// `TripStore`'s contract maps as it says: a move is `UPDATE … WHERE id = $1 AND version = $2` (no row, or a
/// concurrent update, is a conflict); one unfinished ride per customer is a partial unique index; idempotency keys
/// and payment attempts are `INSERT … ON CONFLICT`, whose concurrent writers fail with 40001 or 23505; and SQLSTATE
/// 40001, 40P01 and 23505 reach the caller as `TripStoreConflict`. A lost connection is `StoreUnavailable` (the
/// pool opens a new one for the next call). The ledger refuses UPDATE and DELETE by a trigger.
public final class PostgresTripStore: TripStore, Sendable {
    /// The connections every store of this database shares (`PostgresPathStore(tripStore:)` and the others).
    public let pool: PostgresPool
    /// Whether leases run out by the database's clock (`clock_timestamp()`) rather than the `now` the caller passes.
    let databaseClock: Bool

    /// Schema migrations, applied in order once each (recorded in `schema_migrations`).
    static let migrations: [String] = [
        """
        CREATE TABLE trips (
            id TEXT COLLATE "C" PRIMARY KEY, kind TEXT NOT NULL, status TEXT NOT NULL, version BIGINT NOT NULL,
            customer_id TEXT NOT NULL, provider_id TEXT, merchant_id TEXT, active BOOLEAN NOT NULL,
            created_at DOUBLE PRECISION NOT NULL, updated_at DOUBLE PRECISION NOT NULL, record BYTEA NOT NULL);
        CREATE INDEX trips_active ON trips(active) WHERE active;
        CREATE INDEX trips_customer_active ON trips(customer_id, kind, created_at) WHERE active;
        -- The one-active-ride rule (TripService.requestRide): deliveries may run side by side, rides may not.
        CREATE UNIQUE INDEX trips_one_active_ride ON trips(customer_id) WHERE active AND kind = 'ride';
        CREATE INDEX trips_newest ON trips(created_at, id);
        CREATE INDEX trips_status_newest ON trips(status, created_at, id);
        CREATE INDEX trips_merchant_active ON trips(merchant_id, created_at, id) WHERE active;
        CREATE INDEX trips_customer_newest ON trips(customer_id, created_at, id);
        CREATE INDEX trips_provider_newest ON trips(provider_id, created_at, id) WHERE provider_id IS NOT NULL;
        CREATE INDEX trips_merchant_newest ON trips(merchant_id, created_at, id) WHERE merchant_id IS NOT NULL;
        CREATE TABLE trip_changes (
            trip_id TEXT NOT NULL REFERENCES trips(id), version BIGINT NOT NULL, status TEXT NOT NULL,
            actor_role TEXT NOT NULL, actor_id TEXT NOT NULL, server_time DOUBLE PRECISION NOT NULL, device_time \
        DOUBLE PRECISION,
            change_id TEXT, PRIMARY KEY (trip_id, version));
        CREATE UNIQUE INDEX trip_changes_change ON trip_changes(trip_id, change_id) WHERE change_id IS NOT NULL;
        CREATE TABLE idempotency_keys (
            account_id TEXT NOT NULL, method TEXT NOT NULL, path TEXT NOT NULL, key TEXT NOT NULL,
            fingerprint TEXT NOT NULL, status INTEGER, content_type TEXT, body BYTEA, created_at DOUBLE \
        PRECISION NOT NULL,
            PRIMARY KEY (account_id, method, path, key));
        CREATE INDEX idempotency_created ON idempotency_keys(created_at);
        -- `seq` orders the outbox for a relay that publishes by sequence.
        CREATE TABLE outbox (
            seq BIGSERIAL UNIQUE, id TEXT COLLATE "C" PRIMARY KEY, topic TEXT NOT NULL, payload BYTEA NOT NULL,
            created_at DOUBLE PRECISION NOT NULL, attempts INTEGER NOT NULL DEFAULT 0, not_before DOUBLE \
        PRECISION NOT NULL);
        CREATE INDEX outbox_due ON outbox(topic, not_before);
        CREATE TABLE trip_paths (
            trip_id TEXT NOT NULL, recorded_at DOUBLE PRECISION NOT NULL, provider_id TEXT NOT NULL,
            lat DOUBLE PRECISION NOT NULL, lng DOUBLE PRECISION NOT NULL, heading DOUBLE PRECISION NOT NULL,
            speed DOUBLE PRECISION NOT NULL, accuracy DOUBLE PRECISION NOT NULL, received_at DOUBLE PRECISION NOT NULL,
            PRIMARY KEY (trip_id, recorded_at));
        CREATE TABLE payment_attempts (
            quote_id TEXT PRIMARY KEY, account_id TEXT NOT NULL, trip_id TEXT, intent_id TEXT,
            created_at DOUBLE PRECISION NOT NULL, record BYTEA NOT NULL);
        CREATE INDEX payment_attempts_unattached ON payment_attempts(created_at) WHERE trip_id IS NULL;
        CREATE INDEX payment_attempts_intent ON payment_attempts(intent_id) WHERE intent_id IS NOT NULL;
        CREATE TABLE ledger (
            seq BIGSERIAL PRIMARY KEY, movement_id TEXT NOT NULL, kind TEXT NOT NULL, trip_id TEXT, account \
        TEXT NOT NULL,
            amount_minor BIGINT NOT NULL, currency TEXT NOT NULL, at DOUBLE PRECISION NOT NULL,
            UNIQUE (movement_id, account));
        CREATE INDEX ledger_trip ON ledger(trip_id, seq);
        CREATE INDEX ledger_account ON ledger(account, at);
        CREATE FUNCTION ledger_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN RAISE EXCEPTION 'the ledger is append-only' USING ERRCODE = 'restrict_violation'; END $$;
        CREATE TRIGGER ledger_append_only BEFORE UPDATE OR DELETE ON ledger FOR EACH ROW EXECUTE FUNCTION \
        ledger_append_only();
        CREATE TRIGGER ledger_append_only_truncate BEFORE TRUNCATE ON ledger FOR EACH STATEMENT EXECUTE FUNCTION \
        ledger_append_only();
        CREATE TABLE provider_ratings (provider_id TEXT PRIMARY KEY, count BIGINT NOT NULL, sum BIGINT NOT NULL);
        """,
        // The live fan-out's relay: a version's city, its number in the city's relay order once stamped (`seq` is taken
        // at insert and commits land out of its order, so it cannot be that number), and named leases (who relays a
        // city) with the last number stamped under each.
        """
        ALTER TABLE outbox ADD COLUMN city TEXT, ADD COLUMN relay_seq BIGINT;
        UPDATE outbox SET city = convert_from(payload, 'UTF8')::jsonb ->> 'city' WHERE topic = 'live';
        CREATE INDEX outbox_relay ON outbox(topic, city, relay_seq);
        CREATE TABLE leases (name TEXT PRIMARY KEY, holder TEXT, expires_at DOUBLE PRECISION NOT NULL, stamped BIGINT \
        NOT NULL DEFAULT 0);
        """,
        // A topic's messages oldest first, read in that order: a backlog is not sorted on every claim.
        "CREATE INDEX outbox_oldest ON outbox(topic, created_at, id);",
        // The one-active-ride rule holds for rides asked for now; rides booked ahead are outside it.
        """
        ALTER TABLE trips ADD COLUMN booked BOOLEAN NOT NULL DEFAULT false;
        DROP INDEX trips_one_active_ride;
        CREATE UNIQUE INDEX trips_one_active_ride ON trips(customer_id) WHERE active AND kind = 'ride' AND NOT booked;
        """,
    ]

    /// Connects to `url` (in `schema` when given, created if missing) and brings the schema up to date; migrations
    /// applied now are stamped with `now()`. A malformed URL or an unreachable server throws a `PostgresError` saying
    /// so.
    /// With `databaseClock`, leases run out by the database's clock: nodes whose clocks disagree still agree on who
    /// holds one.
    public init(
        url: String, schema: String? = nil, poolLimits: PostgresPool.Limits = PostgresPool.Limits(),
        databaseClock: Bool = false, now: @Sendable () -> Date = { Date() }
    ) throws {
        pool = try Self.pool(url: url, schema: schema, limits: poolLimits)
        self.databaseClock = databaseClock
        try pool.withConnection { try $0.migrate(Self.migrations, table: "schema_migrations", appliedAt: now()) }
    }

    /// A pool over `url` whose connections work in `schema` (created if missing).
    static func pool(url: String, schema: String?, limits: PostgresPool.Limits) throws -> PostgresPool {
        guard let schema else { return try PostgresPool(url: url, limits: limits) }
        guard schema.range(of: "^[a-z_][a-z0-9_]{0,62}$", options: .regularExpression) != nil else {
            throw PostgresError(
                sqlState: "3F000", message: "schema names are lower-case letters, digits and _: \(schema)")
        }
        let pool = try PostgresPool(url: url, searchPath: schema, limits: limits)
        try pool.withConnection { connection in
            do { try connection.execute("CREATE SCHEMA IF NOT EXISTS \(schema)") } catch let error as PostgresError
                where error.sqlState == "23505"
            {
                // Another connection created it at the same moment.
            }
        }
        return pool
    }

    /// Closes the pool's connections (idle ones now, leased ones when they come back).
    public func close() { pool.close() }

    /// The schema version now in force.
    public var schemaVersion: Int { Self.migrations.count }

    public func transaction<T: Sendable>(
        _ body: @escaping @Sendable (any TripTransaction) async throws -> T
    ) async throws -> T {
        do {
            return try await pool.withLease { lease in
                try await lease.run { try $0.begin(.repeatableRead) }
                do {
                    let result = try await body(Transaction(lease: lease))
                    try await lease.run { try $0.commit() }
                    return result
                } catch {
                    try? await lease.run { $0.rollback() }
                    throw error
                }
            }
        } catch {
            throw Self.mapped(error)
        }
    }

    /// PostgreSQL's errors in the domain's terms: a lost race is `TripStoreConflict`, a lost connection
    /// `StoreUnavailable`.
    static func mapped(_ error: any Error) -> any Error {
        guard let error = error as? PostgresError else { return error }
        if error.isConcurrencyConflict { return TripStoreConflict("\(error.sqlState): \(error.message)") }
        if error.isConnectionLoss { return StoreUnavailable(error.description) }
        return error
    }

    /// Runs `body` on a pooled connection on the caller's thread (the protocol's synchronous reads).
    func read<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        do { return try pool.withConnection(body) } catch { throw Self.mapped(error) }
    }

    /// Runs `work` as one transaction on a pooled connection, off the cooperative pool.
    @discardableResult
    func write<T: Sendable>(_ work: @escaping @Sendable (PostgresConnection) throws -> T) async throws -> T {
        do { return try await pool.withConnection { db in try db.transaction { try work(db) } } } catch {
            throw Self.mapped(error)
        }
    }

    public func trip(id: String) throws -> TripRecord? {
        try read { db in
            try db.query("SELECT record FROM trips WHERE id = $1", [.text(id)]).first.map {
                try Self.decode($0.bytes(0))
            }
        }
    }

    public func trips(_ query: TripQuery, after cursor: TripCursor?, limit: Int) throws -> TripPage {
        let rows = try read { db in
            let (sql, values) = Self.pageSQL(query, after: cursor, limit: limit)
            return try db.query(sql, values).map { row in
                (
                    cursor: TripCursor(createdAt: row.double(0), id: row.text(1) ?? ""),
                    trip: try Self.decode(row.bytes(2))
                )
            }
        }
        let page = rows.prefix(max(0, limit))
        return TripPage(trips: page.map(\.trip), next: rows.count > page.count ? page.last?.cursor : nil)
    }

    /// The statement of one list page and its values: a range of one index, newest first, one row over `limit`.
    static func pageSQL(_ query: TripQuery, after cursor: TripCursor?, limit: Int) -> (String, [PostgresValue]) {
        var conditions: [String] = []
        var values: [PostgresValue] = [.int(max(0, limit) + 1)]
        switch query {
        case .all(status: nil): break
        case .all(status: let status?):
            values.append(.text(status))
            conditions.append("status = $\(values.count)")
        case .merchantActive(let merchantId):
            values.append(.text(merchantId))
            conditions.append("merchant_id = $\(values.count) AND active")
        case .party(let party, let id):
            values.append(.text(id))
            switch party {
            case .customer: conditions.append("customer_id = $\(values.count)")
            case .provider: conditions.append("provider_id = $\(values.count)")
            case .merchant: conditions.append("merchant_id = $\(values.count)")
            case .ops, .backend: conditions.append("$\(values.count)::text IS NULL")
            }
        }
        if let cursor {
            values += [.double(cursor.createdAt), .text(cursor.id)]
            conditions.append("(created_at, id) < ($\(values.count - 1)::double precision, $\(values.count)::text)")
        }
        let filter = conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ")
        return ("SELECT created_at, id, record FROM trips\(filter) ORDER BY created_at DESC, id DESC LIMIT $1", values)
    }

    public func activeTrips() throws -> [TripRecord] {
        try read { db in try db.query("SELECT record FROM trips WHERE active").map { try Self.decode($0.bytes(0)) } }
    }

    public func changes(tripId: String) throws -> [ChangeLogEntry] {
        try read { db in
            try db.query(
                """
                SELECT version, status, actor_role, actor_id, server_time, device_time, change_id
                FROM trip_changes WHERE trip_id = $1 ORDER BY version
                """, [.text(tripId)]
            ).map { Self.change(tripId: tripId, $0) }
        }
    }

    static func change(tripId: String, _ row: PostgresRow) -> ChangeLogEntry {
        ChangeLogEntry(
            tripId: tripId, version: Int(row.int(0)), status: row.text(1) ?? "",
            actorRole: Party(rawValue: row.text(2) ?? "") ?? .backend, actorId: row.text(3) ?? "",
            serverTime: Date(timeIntervalSince1970: row.double(4)),
            deviceTime: row.isNull(5) ? nil : Date(timeIntervalSince1970: row.double(5)), changeId: row.text(6))
    }

    public func releaseUnansweredIdempotency() async throws -> Int {
        try await write { db in try db.run("DELETE FROM idempotency_keys WHERE status IS NULL") }
    }

    public func purgeIdempotency(before cutoff: Date) async throws {
        try await write { db in
            _ = try db.run(
                "DELETE FROM idempotency_keys WHERE created_at < $1", [.double(cutoff.timeIntervalSince1970)])
        }
    }

    static let ledgerColumns = "movement_id, kind, trip_id, account, amount_minor, currency, at"

    static func ledgerRow(_ row: PostgresRow) -> LedgerEntry {
        LedgerEntry(
            movementId: row.text(0) ?? "", kind: row.text(1) ?? "", tripId: row.text(2), account: row.text(3) ?? "",
            amountMinor: Int(row.int(4)), currency: row.text(5) ?? "", at: Date(timeIntervalSince1970: row.double(6)))
    }

    static func decode(_ bytes: [UInt8]) throws -> TripRecord {
        try WireCoding.decoder().decode(TripRecord.self, from: Data(bytes))
    }
    static func encode(_ trip: TripRecord) throws -> [UInt8] { Array(try WireCoding.recordEncoder().encode(trip)) }
    static func decodeAttempt(_ bytes: [UInt8]) throws -> PaymentAttempt {
        try WireCoding.decoder().decode(PaymentAttempt.self, from: Data(bytes))
    }

    /// One `REPEATABLE READ` transaction on a leased connection; each call runs on the connection's queue.
    final class Transaction: TripTransaction, Sendable {
        let lease: PostgresLease
        init(lease: PostgresLease) { self.lease = lease }

        /// Runs `work` on the transaction's connection, its errors in the domain's terms.
        private func run<T: Sendable>(_ work: @escaping @Sendable (PostgresConnection) throws -> T) async throws -> T {
            do { return try await lease.run(work) } catch { throw PostgresTripStore.mapped(error) }
        }

        func trip(_ id: String) async throws -> TripRecord? {
            try await run { db in
                try db.query("SELECT record FROM trips WHERE id = $1", [.text(id)]).first.map {
                    try PostgresTripStore.decode($0.bytes(0))
                }
            }
        }

        func activeTrip(customer: String, kind: TripKind) async throws -> TripRecord? {
            try await run { db in
                try db.query(
                    """
                    SELECT record FROM trips WHERE customer_id = $1 AND kind = $2 AND active
                    ORDER BY created_at DESC, id DESC
                    """, [.text(customer), .text(kind.rawValue)]
                ).map { try PostgresTripStore.decode($0.bytes(0)) }.first { $0.scheduledFor == nil }
            }
        }

        func insert(_ trip: TripRecord) async throws {
            let values = try Self.values(trip)
            try await run { db in
                _ = try db.run(
                    """
                    INSERT INTO trips (id, kind, status, version, customer_id, provider_id, merchant_id, active, \
                    created_at, updated_at, record, booked)
                    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
                    """, values + [.bool(trip.scheduledFor != nil)])
            }
        }

        func update(_ trip: TripRecord, expectedVersion: Int) async throws {
            let values = try Self.values(trip) + [.int(expectedVersion)]
            let changed = try await run { db in
                try db.run(
                    """
                    UPDATE trips SET kind = $2, status = $3, version = $4, customer_id = $5, provider_id = $6, \
                    merchant_id = $7,
                    active = $8, created_at = $9, updated_at = $10, record = $11 WHERE id = $1 AND version = $12
                    """, values)
            }
            guard changed == 1 else { throw TripStoreConflict("trip \(trip.id) (not at version \(expectedVersion))") }
        }

        private static func values(_ trip: TripRecord) throws -> [PostgresValue] {
            [
                .text(trip.id), .text(trip.kind.rawValue), .text(trip.status.name), .int(trip.version),
                .text(trip.customerId),
                .text(trip.providerId), .text(trip.merchantId), .bool(trip.status.isActive),
                .double(trip.createdAt.timeIntervalSince1970), .double(trip.updatedAt.timeIntervalSince1970),
                .bytea(try PostgresTripStore.encode(trip)),
            ]
        }

        func append(_ change: ChangeLogEntry) async throws {
            let values: [PostgresValue] = [
                .text(change.tripId), .int(change.version), .text(change.status), .text(change.actorRole.rawValue),
                .text(change.actorId), .double(change.serverTime.timeIntervalSince1970),
                change.deviceTime.map { .double($0.timeIntervalSince1970) } ?? .null, .text(change.changeId),
            ]
            try await run { db in
                _ = try db.run(
                    """
                    INSERT INTO trip_changes (trip_id, version, status, actor_role, actor_id, server_time, \
                    device_time, change_id)
                    VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
                    """, values)
            }
        }

        func change(tripId: String, changeId: String) async throws -> ChangeLogEntry? {
            try await run { db in
                try db.query(
                    """
                    SELECT version, status, actor_role, actor_id, server_time, device_time, change_id FROM trip_changes
                    WHERE trip_id = $1 AND change_id = $2
                    """, [.text(tripId), .text(changeId)]
                ).first.map { PostgresTripStore.change(tripId: tripId, $0) }
            }
        }

        func idempotency(_ scope: IdempotencyScope) async throws -> IdempotencyRecord? {
            try await run { db in
                try db.query(
                    """
                    SELECT fingerprint, status, content_type, body, created_at FROM idempotency_keys
                    WHERE account_id = $1 AND method = $2 AND path = $3 AND key = $4
                    """, [.text(scope.accountId), .text(scope.method), .text(scope.path), .text(scope.key)]
                ).first.map { row in
                    IdempotencyRecord(
                        scope: scope, fingerprint: row.text(0) ?? "",
                        response: row.isNull(1)
                            ? nil
                            : StoredResponse(
                                status: Int(row.int(1)), contentType: row.text(2) ?? "", body: row.bytes(3)),
                        createdAt: Date(timeIntervalSince1970: row.double(4)))
                }
            }
        }

        func save(_ record: IdempotencyRecord) async throws {
            let s = record.scope
            let values: [PostgresValue] = [
                .text(s.accountId), .text(s.method), .text(s.path), .text(s.key), .text(record.fingerprint),
                record.response.map { .int($0.status) } ?? .null, .text(record.response?.contentType),
                record.response.map { .bytea($0.body) } ?? .null, .double(record.createdAt.timeIntervalSince1970),
            ]
            // A concurrent writer of the same key makes this fail with 23505 (it inserted first) or 40001 (it updated
            // first).
            try await run { db in
                _ = try db.run(
                    """
                    INSERT INTO idempotency_keys (account_id, method, path, key, fingerprint, status, content_type, \
                    body, created_at)
                    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
                    ON CONFLICT (account_id, method, path, key) DO UPDATE SET fingerprint = EXCLUDED.fingerprint, \
                    status = EXCLUDED.status,
                    content_type = EXCLUDED.content_type, body = EXCLUDED.body, created_at = EXCLUDED.created_at
                    """, values)
            }
        }

        func deleteIdempotency(_ scope: IdempotencyScope) async throws {
            try await run { db in
                _ = try db.run(
                    "DELETE FROM idempotency_keys WHERE account_id = $1 AND method = $2 AND path = $3 AND key = $4",
                    [.text(scope.accountId), .text(scope.method), .text(scope.path), .text(scope.key)])
            }
        }

        func enqueue(_ message: OutboxMessage) async throws {
            try await run { db in
                _ = try db.run(
                    """
                    INSERT INTO outbox (id, topic, payload, created_at, attempts, not_before, city) VALUES ($1, $2, \
                    $3, $4, $5, $6, $7)
                    ON CONFLICT (id) DO NOTHING
                    """,
                    [
                        .text(message.id), .text(message.topic), .bytea(message.payload),
                        .double(message.createdAt.timeIntervalSince1970),
                        .int(message.attempts), .double(message.notBefore.timeIntervalSince1970),
                        message.city.map { .text($0) } ?? .null,
                    ])
            }
        }

        func paymentAttempt(quoteId: String) async throws -> PaymentAttempt? {
            try await run { db in
                try db.query("SELECT record FROM payment_attempts WHERE quote_id = $1", [.text(quoteId)]).first.map {
                    try PostgresTripStore.decodeAttempt($0.bytes(0))
                }
            }
        }

        func save(_ attempt: PaymentAttempt) async throws {
            let values: [PostgresValue] = [
                .text(attempt.quoteId), .text(attempt.accountId), .text(attempt.tripId),
                .text(attempt.payment.intentId),
                .double(attempt.createdAt.timeIntervalSince1970),
                .bytea(Array(try WireCoding.recordEncoder().encode(attempt))),
            ]
            try await run { db in
                _ = try db.run(
                    """
                    INSERT INTO payment_attempts (quote_id, account_id, trip_id, intent_id, created_at, record) VALUES \
                    ($1, $2, $3, $4, $5, $6)
                    ON CONFLICT (quote_id) DO UPDATE SET account_id = EXCLUDED.account_id, trip_id = EXCLUDED.trip_id,
                    intent_id = EXCLUDED.intent_id, created_at = EXCLUDED.created_at, record = EXCLUDED.record
                    """, values)
            }
        }

        func addRating(provider: String, stars: Int) async throws {
            try await run { db in
                _ = try db.run(
                    """
                    INSERT INTO provider_ratings (provider_id, count, sum) VALUES ($1, 1, $2)
                    ON CONFLICT (provider_id) DO UPDATE SET count = provider_ratings.count + 1, sum = \
                    provider_ratings.sum + EXCLUDED.sum
                    """, [.text(provider), .int(stars)])
            }
        }

        func post(_ entries: [LedgerEntry]) async throws {
            try Ledger.checkBalanced(entries)
            // A movement and account posted already is a unique violation (23505): a conflict, as the contract says.
            try await run { db in
                for e in entries {
                    _ = try db.run(
                        "INSERT INTO ledger (movement_id, kind, trip_id, account, amount_minor, currency, at) VALUES "
                            + "($1, $2, $3, $4, $5, $6, $7)",
                        [
                            .text(e.movementId), .text(e.kind), .text(e.tripId), .text(e.account), .int(e.amountMinor),
                            .text(e.currency),
                            .double(e.at.timeIntervalSince1970),
                        ])
                }
            }
        }
    }
}

/// The pool limits a store is opened with (`PostgresPool.Limits`), named where the backend configures them.
public typealias PostgresPoolLimits = PostgresPool.Limits
