public import Foundation
public import EnRouteDomain
import EnRouteModels
import SQLiteClient
import Synchronization

/// The trip store on SQLite (WAL): one writer connection that transactions take turns on (first come, first
/// served, so they never conflict with each other), one reader for lookups.
///
/// It keeps `TripStore`'s contract by running one transaction at a time: a version check in `update` still
/// refuses a stale write with `TripStoreConflict`, so callers meet the same rules as on a concurrent store.
/// A body holds the writer across its awaits, so it must not wait for another write to this file, nor for a caller
/// of an earlier transaction to go on: transactions that queue up behind each other commit together (`SQLiteWriter`),
/// and each caller goes on once the group has committed. A body reads through its transaction, which sees the group's
/// writes; the store's own reads (`trip(id:)`…) see only what is committed.
public final class SQLiteTripStore: TripStore, @unchecked Sendable {
    /// Shared with the path store over the same file (`SQLitePathStore(tripStore:)`).
    let writer: SQLiteWriter
    let reader: Mutex<SQLiteDatabase>
    public let path: String

    /// Schema migrations, applied in order once each.
    static let migrations: [String] = [
        """
        CREATE TABLE trips (
            id TEXT PRIMARY KEY, kind TEXT NOT NULL, status TEXT NOT NULL, version INTEGER NOT NULL,
            customer_id TEXT NOT NULL, provider_id TEXT, merchant_id TEXT, active INTEGER NOT NULL,
            created_at REAL NOT NULL, updated_at REAL NOT NULL, record BLOB NOT NULL);
        CREATE INDEX trips_status ON trips(status, created_at);
        CREATE INDEX trips_created ON trips(created_at);
        CREATE INDEX trips_active ON trips(active) WHERE active = 1;
        CREATE TABLE trip_changes (
            trip_id TEXT NOT NULL REFERENCES trips(id), version INTEGER NOT NULL, status TEXT NOT NULL,
            actor_role TEXT NOT NULL, actor_id TEXT NOT NULL, server_time REAL NOT NULL, device_time REAL, \
        change_id TEXT,
            PRIMARY KEY (trip_id, version));
        CREATE UNIQUE INDEX trip_changes_change ON trip_changes(trip_id, change_id) WHERE change_id IS NOT NULL;
        CREATE TABLE idempotency_keys (
            account_id TEXT NOT NULL, method TEXT NOT NULL, path TEXT NOT NULL, key TEXT NOT NULL,
            fingerprint TEXT NOT NULL, status INTEGER, content_type TEXT, body BLOB, created_at REAL NOT NULL,
            PRIMARY KEY (account_id, method, path, key));
        CREATE INDEX idempotency_created ON idempotency_keys(created_at);
        """,
        """
        CREATE TABLE outbox (
            id TEXT PRIMARY KEY, topic TEXT NOT NULL, payload BLOB NOT NULL, created_at REAL NOT NULL,
            attempts INTEGER NOT NULL DEFAULT 0, not_before REAL NOT NULL);
        CREATE INDEX outbox_due ON outbox(topic, not_before);
        """,
        // Each trip's path of kept location fixes (SQLitePathStore); one row per trip and device time.
        """
        CREATE TABLE trip_paths (
            trip_id TEXT NOT NULL, recorded_at REAL NOT NULL, provider_id TEXT NOT NULL,
            lat REAL NOT NULL, lng REAL NOT NULL, heading REAL NOT NULL, speed REAL NOT NULL, accuracy REAL NOT NULL,
            received_at REAL NOT NULL,
            PRIMARY KEY (trip_id, recorded_at)) WITHOUT ROWID;
        """,
        // The one-active-ride rule reads a customer's unfinished trips inside the creating transaction.
        """
        CREATE INDEX trips_customer_active ON trips(customer_id, kind, created_at) WHERE active = 1;
        """,
        // List pages (`trips(_:after:limit:)`) walk these newest first by (created_at, id), from a cursor.
        """
        DROP INDEX trips_created;
        DROP INDEX trips_status;
        CREATE INDEX trips_newest ON trips(created_at, id);
        CREATE INDEX trips_status_newest ON trips(status, created_at, id);
        CREATE INDEX trips_merchant_active ON trips(merchant_id, created_at, id) WHERE active = 1;
        """,
        // Money: holds placed per quote before their trip exists, and the append-only, double-entry ledger; history
        // pages per party.
        """
        CREATE TABLE payment_attempts (
            quote_id TEXT PRIMARY KEY, account_id TEXT NOT NULL, trip_id TEXT, intent_id TEXT, created_at REAL NOT \
        NULL, record BLOB NOT NULL);
        CREATE INDEX payment_attempts_unattached ON payment_attempts(created_at) WHERE trip_id IS NULL;
        CREATE INDEX payment_attempts_intent ON payment_attempts(intent_id) WHERE intent_id IS NOT NULL;
        CREATE TABLE ledger (
            seq INTEGER PRIMARY KEY AUTOINCREMENT, movement_id TEXT NOT NULL, kind TEXT NOT NULL, trip_id TEXT, \
        account TEXT NOT NULL,
            amount_minor INTEGER NOT NULL, currency TEXT NOT NULL, at REAL NOT NULL,
            UNIQUE (movement_id, account));
        CREATE INDEX ledger_trip ON ledger(trip_id, seq);
        CREATE INDEX ledger_account ON ledger(account, at);
        CREATE TRIGGER ledger_append_only_update BEFORE UPDATE ON ledger BEGIN SELECT RAISE(ABORT, 'the ledger is \
        append-only'); END;
        CREATE TRIGGER ledger_append_only_delete BEFORE DELETE ON ledger BEGIN SELECT RAISE(ABORT, 'the ledger is \
        append-only'); END;
        CREATE TABLE provider_ratings (provider_id TEXT PRIMARY KEY, count INTEGER NOT NULL, sum INTEGER NOT NULL);
        CREATE INDEX trips_customer_newest ON trips(customer_id, created_at, id);
        CREATE INDEX trips_provider_newest ON trips(provider_id, created_at, id) WHERE provider_id IS NOT NULL;
        CREATE INDEX trips_merchant_newest ON trips(merchant_id, created_at, id) WHERE merchant_id IS NOT NULL;
        """,
        // The live fan-out's relay: a version's city, its number in the city's relay order once stamped, and named
        // leases (who relays a city) with the last number stamped under each.
        """
        ALTER TABLE outbox ADD COLUMN city TEXT;
        ALTER TABLE outbox ADD COLUMN relay_seq INTEGER;
        UPDATE outbox SET city = json_extract(CAST(payload AS TEXT), '$.city') WHERE topic = 'live' AND \
        json_valid(CAST(payload AS TEXT));
        CREATE INDEX outbox_relay ON outbox(topic, city, relay_seq);
        CREATE TABLE leases (name TEXT PRIMARY KEY, holder TEXT, expires_at REAL NOT NULL, stamped INTEGER NOT \
        NULL DEFAULT 0);
        """,
        // A topic's messages oldest first, read in that order: a backlog is not sorted on every claim.
        "CREATE INDEX outbox_oldest ON outbox(topic, created_at, id);",
    ]

    /// Opens or creates the database at `path` and brings its schema up to date; migrations applied now
    /// are stamped with `now()`. The write-ahead log is copied into the database once it reaches `checkpointPages`.
    public init(path: String, checkpointPages: Int = 1_000, now: @Sendable () -> Date = { Date() }) throws {
        self.path = path
        let shared = try SQLiteWriter(path: path, label: "enroute.sqlite.writer", checkpointPages: checkpointPages)
        try shared.db.migrate(Self.migrations, table: "schema_migrations", appliedAt: now())
        self.writer = shared
        reader = Mutex(try SQLiteDatabase(path: path))
    }

    /// The schema version now in force.
    public var schemaVersion: Int { Self.migrations.count }

    public func transaction<T: Sendable>(
        _ body: @escaping @Sendable (any TripTransaction) async throws -> T
    ) async throws -> T {
        try await writer.transaction { db in try await body(Transaction(db: db)) }
    }

    /// Runs `work` on the writer as one transaction, in turn with every other.
    func write<T>(_ work: (SQLiteDatabase) throws -> T) async throws -> T {
        try await writer.transaction { db in try work(db) }
    }

    public func trip(id: String) throws -> TripRecord? {
        try reader.withLock { db in
            try db.query("SELECT record FROM trips WHERE id = ?1", [.text(id)]) { try Self.decode($0.blob(0)) }.first
        }
    }

    public func trips(_ query: TripQuery, after cursor: TripCursor?, limit: Int) throws -> TripPage {
        let rows = try reader.withLock { db in
            let (sql, values) = Self.pageSQL(query, after: cursor, limit: limit)
            return try db.query(sql, values) { row in
                (
                    cursor: TripCursor(createdAt: row.double(0), id: row.text(1) ?? ""),
                    trip: try Self.decode(row.blob(2))
                )
            }
        }
        // One row more than asked says whether a next page exists; the cursor is the key as stored, not as decoded.
        let page = rows.prefix(max(0, limit))
        return TripPage(trips: page.map(\.trip), next: rows.count > page.count ? page.last?.cursor : nil)
    }

    /// The statement of one list page and its values: a range of one index, newest first, one row over `limit`.
    static func pageSQL(_ query: TripQuery, after cursor: TripCursor?, limit: Int) -> (String, [SQLiteValue]) {
        var conditions: [String] = []
        var values: [SQLiteValue] = [.integer(Int64(max(0, limit)) + 1)]
        switch query {
        case .all(status: nil): break
        case .all(status: let status?):
            values.append(.text(status))
            conditions.append("status = ?\(values.count)")
        case .merchantActive(let merchantId):
            values.append(.text(merchantId))
            conditions.append("merchant_id = ?\(values.count) AND active = 1")
        case .party(let party, let id):
            values.append(.text(id))
            switch party {
            case .customer: conditions.append("customer_id = ?\(values.count)")
            case .provider: conditions.append("provider_id = ?\(values.count)")
            case .merchant: conditions.append("merchant_id = ?\(values.count)")
            case .ops, .backend: conditions.append("0")
            }
        }
        if let cursor {
            values += [.real(cursor.createdAt), .text(cursor.id)]
            conditions.append("(created_at, id) < (?\(values.count - 1), ?\(values.count))")
        }
        let filter = conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ")
        // A merchant's active list reads only the active rows, not the merchant's whole history.
        let index = if case .merchantActive = query { " INDEXED BY trips_merchant_active" } else { "" }
        return (
            "SELECT created_at, id, record FROM trips\(index)\(filter) ORDER BY created_at DESC, id DESC LIMIT ?1",
            values
        )
    }

    /// SQLite's plan for one list page (`EXPLAIN QUERY PLAN`), one line per step: shows which index serves it.
    public func queryPlan(_ query: TripQuery, after cursor: TripCursor?, limit: Int) throws -> [String] {
        try reader.withLock { db in
            let (sql, values) = Self.pageSQL(query, after: cursor, limit: limit)
            return try db.query("EXPLAIN QUERY PLAN " + sql, values) { $0.text(3) ?? "" }
        }
    }

    /// SQLite's plan for handing out a topic's due outbox messages, one line per step.
    public func dueOutboxPlan() throws -> [String] {
        try reader.withLock { db in
            try db.query("EXPLAIN QUERY PLAN " + Self.dueSQL, [.text("t"), .real(0), .integer(1)]) { $0.text(3) ?? "" }
        }
    }

    public func activeTrips() throws -> [TripRecord] {
        try reader.withLock { db in
            try db.query("SELECT record FROM trips WHERE active = 1") { try Self.decode($0.blob(0)) }
        }
    }

    public func changes(tripId: String) throws -> [ChangeLogEntry] {
        try reader.withLock { db in
            try db.query(
                """
                SELECT version, status, actor_role, actor_id, server_time, device_time, change_id
                FROM trip_changes WHERE trip_id = ?1 ORDER BY version
                """, [.text(tripId)]
            ) { row in
                ChangeLogEntry(
                    tripId: tripId, version: Int(row.int(0)), status: row.text(1) ?? "",
                    actorRole: Party(rawValue: row.text(2) ?? "") ?? .backend, actorId: row.text(3) ?? "",
                    serverTime: Date(timeIntervalSince1970: row.double(4)),
                    deviceTime: row.isNull(5) ? nil : Date(timeIntervalSince1970: row.double(5)), changeId: row.text(6))
            }
        }
    }

    public func releaseUnansweredIdempotency() async throws -> Int {
        try await write { db in
            try db.run("DELETE FROM idempotency_keys WHERE status IS NULL", [])
            return db.changes
        }
    }

    public func purgeIdempotency(before cutoff: Date) async throws {
        try await write { db in
            try db.run("DELETE FROM idempotency_keys WHERE created_at < ?1", [.real(cutoff.timeIntervalSince1970)])
        }
    }

    static let ledgerColumns = "movement_id, kind, trip_id, account, amount_minor, currency, at"

    static func ledgerRow(_ row: SQLiteStatement) -> LedgerEntry {
        LedgerEntry(
            movementId: row.text(0) ?? "", kind: row.text(1) ?? "", tripId: row.text(2), account: row.text(3) ?? "",
            amountMinor: Int(row.int(4)), currency: row.text(5) ?? "", at: Date(timeIntervalSince1970: row.double(6)))
    }

    static func decode(_ bytes: [UInt8]) throws -> TripRecord {
        try WireCoding.decoder().decode(TripRecord.self, from: Data(bytes))
    }

    static func encode(_ trip: TripRecord) throws -> [UInt8] {
        Array(try WireCoding.recordEncoder().encode(trip))
    }

    /// Used only by the task holding the writer's turn.
    final class Transaction: TripTransaction {
        let db: SQLiteDatabase
        init(db: SQLiteDatabase) { self.db = db }

        func trip(_ id: String) throws -> TripRecord? {
            try db.query("SELECT record FROM trips WHERE id = ?1", [.text(id)]) {
                try SQLiteTripStore.decode($0.blob(0))
            }.first
        }

        func activeTrip(customer: String, kind: TripKind) throws -> TripRecord? {
            try db.query(
                """
                SELECT record FROM trips WHERE customer_id = ?1 AND kind = ?2 AND active = 1
                ORDER BY created_at DESC, id DESC
                """, [.text(customer), .text(kind.rawValue)]
            ) { try SQLiteTripStore.decode($0.blob(0)) }.first { $0.scheduledFor == nil }
        }

        func insert(_ trip: TripRecord) throws {
            try db.run(
                """
                INSERT INTO trips (id, kind, status, version, customer_id, provider_id, merchant_id, active, \
                created_at, updated_at, record)
                VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)
                """, values(trip))
        }

        func update(_ trip: TripRecord, expectedVersion: Int) throws {
            try db.run(
                """
                UPDATE trips SET kind = ?2, status = ?3, version = ?4, customer_id = ?5, provider_id = ?6, \
                merchant_id = ?7,
                active = ?8, created_at = ?9, updated_at = ?10, record = ?11 WHERE id = ?1 AND version = ?12
                """, values(trip) + [.integer(Int64(expectedVersion))])
            guard db.changes == 1 else {
                throw TripStoreConflict("trip \(trip.id) (not at version \(expectedVersion))")
            }
        }

        private func values(_ trip: TripRecord) throws -> [SQLiteValue] {
            [
                .text(trip.id), .text(trip.kind.rawValue), .text(trip.status.name), .integer(Int64(trip.version)),
                .text(trip.customerId),
                trip.providerId.map { .text($0) } ?? .null, trip.merchantId.map { .text($0) } ?? .null,
                .integer(trip.status.isActive ? 1 : 0),
                .real(trip.createdAt.timeIntervalSince1970), .real(trip.updatedAt.timeIntervalSince1970),
                .blob(try SQLiteTripStore.encode(trip)),
            ]
        }

        func append(_ change: ChangeLogEntry) throws {
            try db.run(
                """
                INSERT INTO trip_changes (trip_id, version, status, actor_role, actor_id, server_time, \
                device_time, change_id)
                VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
                """,
                [
                    .text(change.tripId), .integer(Int64(change.version)), .text(change.status),
                    .text(change.actorRole.rawValue),
                    .text(change.actorId), .real(change.serverTime.timeIntervalSince1970),
                    change.deviceTime.map { .real($0.timeIntervalSince1970) } ?? .null,
                    change.changeId.map { .text($0) } ?? .null,
                ])
        }

        func change(tripId: String, changeId: String) throws -> ChangeLogEntry? {
            try db.query(
                """
                SELECT version, status, actor_role, actor_id, server_time, device_time FROM trip_changes
                WHERE trip_id = ?1 AND change_id = ?2
                """, [.text(tripId), .text(changeId)]
            ) { row in
                ChangeLogEntry(
                    tripId: tripId, version: Int(row.int(0)), status: row.text(1) ?? "",
                    actorRole: Party(rawValue: row.text(2) ?? "") ?? .backend, actorId: row.text(3) ?? "",
                    serverTime: Date(timeIntervalSince1970: row.double(4)),
                    deviceTime: row.isNull(5) ? nil : Date(timeIntervalSince1970: row.double(5)), changeId: changeId)
            }.first
        }

        func idempotency(_ scope: IdempotencyScope) throws -> IdempotencyRecord? {
            try db.query(
                """
                SELECT fingerprint, status, content_type, body, created_at FROM idempotency_keys
                WHERE account_id = ?1 AND method = ?2 AND path = ?3 AND key = ?4
                """, [.text(scope.accountId), .text(scope.method), .text(scope.path), .text(scope.key)]
            ) { row in
                IdempotencyRecord(
                    scope: scope, fingerprint: row.text(0) ?? "",
                    response: row.isNull(1)
                        ? nil
                        : StoredResponse(status: Int(row.int(1)), contentType: row.text(2) ?? "", body: row.blob(3)),
                    createdAt: Date(timeIntervalSince1970: row.double(4)))
            }.first
        }

        func save(_ record: IdempotencyRecord) throws {
            let s = record.scope
            // An upsert: the claim's row is answered in place (REPLACE would delete it and insert it again in every
            // index).
            try db.run(
                """
                INSERT INTO idempotency_keys (account_id, method, path, key, fingerprint, status, content_type, \
                body, created_at)
                VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
                ON CONFLICT (account_id, method, path, key) DO UPDATE SET fingerprint = ?5, status = ?6, content_type \
                = ?7, body = ?8, created_at = ?9
                """,
                [
                    .text(s.accountId), .text(s.method), .text(s.path), .text(s.key), .text(record.fingerprint),
                    record.response.map { .integer(Int64($0.status)) } ?? .null,
                    record.response.map { .text($0.contentType) } ?? .null,
                    record.response.map { .blob($0.body) } ?? .null, .real(record.createdAt.timeIntervalSince1970),
                ])
        }

        func enqueue(_ message: OutboxMessage) throws {
            try db.run(
                "INSERT OR IGNORE INTO outbox (id, topic, payload, created_at, attempts, not_before, city) VALUES (?1, "
                    + "?2, ?3, ?4, ?5, ?6, ?7)",
                [
                    .text(message.id), .text(message.topic), .blob(message.payload),
                    .real(message.createdAt.timeIntervalSince1970),
                    .integer(Int64(message.attempts)), .real(message.notBefore.timeIntervalSince1970),
                    message.city.map { .text($0) } ?? .null,
                ])
        }

        func paymentAttempt(quoteId: String) throws -> PaymentAttempt? {
            try db.query("SELECT record FROM payment_attempts WHERE quote_id = ?1", [.text(quoteId)]) {
                try WireCoding.decoder().decode(PaymentAttempt.self, from: Data($0.blob(0)))
            }.first
        }

        func save(_ attempt: PaymentAttempt) throws {
            // An upsert: the attempt changes in place.
            try db.run(
                """
                INSERT INTO payment_attempts (quote_id, account_id, trip_id, intent_id, created_at, record) VALUES \
                (?1, ?2, ?3, ?4, ?5, ?6)
                ON CONFLICT (quote_id) DO UPDATE SET account_id = ?2, trip_id = ?3, intent_id = ?4, created_at = \
                ?5, record = ?6
                """,
                [
                    .text(attempt.quoteId), .text(attempt.accountId), attempt.tripId.map { .text($0) } ?? .null,
                    attempt.payment.intentId.map { .text($0) } ?? .null,
                    .real(attempt.createdAt.timeIntervalSince1970),
                    .blob(Array(try WireCoding.recordEncoder().encode(attempt))),
                ])
        }

        func addRating(provider: String, stars: Int) throws {
            try db.run(
                """
                INSERT INTO provider_ratings (provider_id, count, sum) VALUES (?1, 1, ?2)
                ON CONFLICT(provider_id) DO UPDATE SET count = count + 1, sum = sum + ?2
                """, [.text(provider), .integer(Int64(stars))])
        }

        func post(_ entries: [LedgerEntry]) throws {
            try Ledger.checkBalanced(entries)
            for e in entries {
                do {
                    try db.run(
                        "INSERT INTO ledger (movement_id, kind, trip_id, account, amount_minor, currency, at) VALUES "
                            + "(?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                        [
                            .text(e.movementId), .text(e.kind), e.tripId.map { .text($0) } ?? .null, .text(e.account),
                            .integer(Int64(e.amountMinor)), .text(e.currency), .real(e.at.timeIntervalSince1970),
                        ])
                } catch {
                    // The same movement posted twice: another run of this work got there first.
                    if try db.query(
                        "SELECT 1 FROM ledger WHERE movement_id = ?1 AND account = ?2",
                        [.text(e.movementId), .text(e.account)], { _ in 1 }
                    ).isEmpty == false {
                        throw TripStoreConflict("ledger movement \(e.movementId)")
                    }
                    throw error
                }
            }
        }

        func deleteIdempotency(_ scope: IdempotencyScope) throws {
            try db.run(
                "DELETE FROM idempotency_keys WHERE account_id = ?1 AND method = ?2 AND path = ?3 AND key = ?4",
                [.text(scope.accountId), .text(scope.method), .text(scope.path), .text(scope.key)])
        }
    }
}

extension SQLiteTripStore {
    /// A connection of its own to this store's database with `migrations` applied once each (recorded in `table`),
    /// for a store that keeps its tables beside the trips: it reads there and writes through `writer`.
    func companionReader(migrations: [String], table: String, appliedAt: Date) throws -> Mutex<SQLiteDatabase> {
        let database = try SQLiteDatabase(path: path)
        try database.migrate(migrations, table: table, appliedAt: appliedAt)
        return Mutex(database)
    }
}
