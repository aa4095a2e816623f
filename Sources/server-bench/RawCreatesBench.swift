import Foundation
import EnRouteLogging
import Synchronization
import EnRouteBackend
import EnRouteDomain
import EnRouteModels
import EnRouteNotifications
import SQLiteClient

/// The floor under a create (bench/create.sh): SQLite alone writing the rows one create leaves, one transaction per
/// create,
/// into a fresh database with the server's schema (built by the same `Backend` over `--db`, so every table, index and
/// pragma is the one `enroute serve` uses).
///
/// The rows are copied from the newest created trip in `--template` (the database the server just wrote in the same
/// run):
/// its trip row and record, its change-log entry, its payment attempt, its ledger rows and its Idempotency-Key with the
/// stored answer (the gateway's callback for the hold is not queued: the payment worker has nothing to do with it).
/// Keys are fresh per create (random 12-character ids, as the server's), the blobs are the
/// template's bytes. A ride also runs the one-unfinished-ride check, an index probe inside the transaction.
///
/// `--writers N` threads share one connection, taking it in turn (SQLite has one writer; a connection each would only
/// meet its busy lock); a create's time runs from asking for the connection to its commit. The process's CPU time
/// (getrusage, user + system) over the timed creates is the reference's cost per create.
struct RawCreatesBench {
    let template: String
    let database: String
    let creates: Int
    let customers: Int
    let writers: Int
    let seconds: Double
    let seed: UInt64

    init(_ args: BenchArguments) {
        template = args.string("template")
        database = args.string("db")
        creates = args.int("creates", 20_000)
        customers = args.int("customers", 0)
        writers = args.int("writers", 1)
        seconds = args.double("seconds", 60)
        seed = UInt64(args.int("seed", 16))
    }

    /// One create's rows as they were written, keyed by the template's ids.
    struct Template {
        var trip: [SQLiteValue] = []  // trips, columns in `insertTrip`'s order
        var tripId = "", customerId = "", kind = ""
        var change: [SQLiteValue] = []  // trip_changes after trip_id
        var attempt: [SQLiteValue] = []  // payment_attempts: quote_id, account_id, intent_id, created_at, record
        var ledger: [[SQLiteValue]] = []  // ledger: movement_id, kind, account, amount_minor, currency, at
        // idempotency_keys: method, path, fingerprint, status, content_type, body, created_at
        var key: [SQLiteValue] = []
    }

    /// What one writer thread did.
    struct WriterResult: Sendable {
        var latencies: [Double]
        var end: Double
        var error: String?
    }

    static let insertTrip = """
        INSERT INTO trips (id, kind, status, version, customer_id, provider_id, merchant_id, active, created_at, \
        updated_at, record)
        VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)
        """
    static let insertChange = """
        INSERT INTO trip_changes (trip_id, version, status, actor_role, actor_id, server_time, device_time, change_id)
        VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
        """
    static let insertAttempt = """
        INSERT OR REPLACE INTO payment_attempts (quote_id, account_id, trip_id, intent_id, created_at, record) VALUES \
        (?1, ?2, ?3, ?4, ?5, ?6)
        """
    static let insertLedger =
        "INSERT INTO ledger (movement_id, kind, trip_id, account, amount_minor, currency, at) VALUES (?1, ?2, ?3, ?4, "
        + "?5, ?6, ?7)"
    static let insertKey = """
        INSERT OR REPLACE INTO idempotency_keys (account_id, method, path, key, fingerprint, status, content_type, \
        body, created_at)
        VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
        """
    static let activeRide = """
        SELECT record FROM trips WHERE customer_id = ?1 AND kind = ?2 AND active = 1 ORDER BY created_at DESC, id \
        DESC LIMIT 1
        """

    func run() throws {
        try checkArguments()
        let rows = try Self.read(template)
        try createSchema()
        let (keys, customerIds) = makeKeys()
        print(
            "raw SQLite creates: \(creates) at most, \(writers) writer\(writers == 1 ? "" : "s") on one connection, "
                + "\(customerIds.count) customers; rows per create: 1 trip, 1 change, 1 payment attempt, "
                + "\(rows.ledger.count) ledger, "
                + "1 Idempotency-Key with its answer"
                + (rows.kind == TripKind.ride.rawValue ? "; the one-unfinished-ride check" : ""))
        let connection = Mutex(try SQLiteDatabase(path: database))
        let cpuStart = ProcessCPU.selfSeconds()
        let start = Percentiles.now()
        let finished = runWriters { i in
            try connection.withLock { db in
                try Self.create(rows, keys[i], customer: customerIds[i % customerIds.count], in: db)
            }
        }
        let cpu = ProcessCPU.selfSeconds() - cpuStart
        if let failure = finished.compactMap(\.error).first {
            throw FanoutBench.Failure(description: "raw create failed: \(failure)")
        }
        let latencies = Percentiles(finished.flatMap(\.latencies))
        let count = latencies.sorted.count
        let elapsed = (finished.map(\.end).max() ?? start) - start
        let stored = try connection.withLock { db in
            try db.query("SELECT COUNT(*) FROM trips") { Int($0.int(0)) }.first ?? 0
        }
        guard stored == count else {
            throw FanoutBench.Failure(description: "\(count) creates committed but \(stored) trips stored")
        }
        let rate = Double(count) / elapsed
        print(
            String(
                format: "raw SQLite: %d creates in %.2f s: %.0f/s  p50 %.3f ms  p99 %.3f ms", count, elapsed, rate,
                latencies(50) * 1e3, latencies(99) * 1e3))
        print(
            String(
                format: "raw SQLite CPU: %.3f s over the timed creates (this process, user + system): "
                    + "%.2f us per create", cpu, cpu / Double(max(count, 1)) * 1e6))
        // Then the CPU seconds and the creates it bought, for the cost per create.
        print(
            String(
                format: "RESULT raw-creates %.1f %.3f %.3f %d %.4f %d", rate, latencies(50) * 1e3, latencies(99) * 1e3,
                writers, cpu, count))
    }

    /// Refuses a missing template, a database that already exists, and counts out of range.
    private func checkArguments() throws {
        guard !template.isEmpty, FileManager.default.fileExists(atPath: template) else {
            throw FanoutBench.Failure(
                description: "raw-creates needs --template, the server's database after its creates (got '\(template)')"
            )
        }
        guard !database.isEmpty, !FileManager.default.fileExists(atPath: database) else {
            throw FanoutBench.Failure(
                description: "raw-creates needs --db, a database file that does not exist yet (got '\(database)')")
        }
        guard creates > 0, writers > 0, seconds > 0, customers >= 0 else {
            throw FanoutBench.Failure(
                description: "raw-creates: --creates, --writers and --seconds must be positive, --customers at least 0")
        }
    }

    /// The server's schema in `--db`, migrated by the server's own stores.
    private func createSchema() throws {
        var configuration = BackendConfiguration(
            storage: .sqlite(path: database), secret: "raw-creates-secret-0123456789")
        configuration.proofDirectory = database + ".blobs"
        _ = try Backend(configuration, effects: .system(push: LogPushGateway(log: .discard), log: .discard))
    }

    /// Every key made before the clock starts (the reference times SQLite, not id generation): each create's trip,
    /// quote and Idempotency-Key, and the customers the creates take turns among.
    private func makeKeys() -> (keys: [(trip: String, quote: String, key: String)], customerIds: [String]) {
        let perCustomer = customers == 0 ? creates : customers
        var random = SplitMix64(seed: seed)
        let alphabet = Array("0123456789ABCDEFGHJKMNPQRSTVWXYZ")
        func id() -> String { String((0..<12).map { _ in alphabet[Int(random.next() & 31)] }) }
        let keys: [(trip: String, quote: String, key: String)] = (0..<creates).map { _ in
            (id(), "q_" + id(), "raw-" + id().lowercased())
        }
        let customerIds = (0..<min(creates, perCustomer)).map { "raw-c\($0)-" + id() }
        return (keys, customerIds)
    }

    /// `--writers` threads taking the creates in turn (`create(i)` makes create `i` in its own transaction on the
    /// one connection), until all are made or `--seconds` pass; what each writer did.
    private func runWriters(_ create: @escaping @Sendable (Int) throws -> Void) -> [WriterResult] {
        let creates = self.creates, writers = self.writers
        let next = Atomic<Int>(0)
        let deadline = Percentiles.now() + seconds
        let results = Mutex<[WriterResult]>([])
        let group = DispatchGroup()
        for _ in 0..<writers {
            group.enter()
            Thread.detachNewThread {
                var latencies: [Double] = []
                latencies.reserveCapacity(creates / writers + 1)
                var failure: String?
                while Percentiles.now() < deadline {
                    let i = next.add(1, ordering: .relaxed).oldValue
                    guard i < creates else { break }
                    let t0 = Percentiles.now()
                    do {
                        try create(i)
                    } catch {
                        failure = "\(error)"
                        break
                    }
                    latencies.append(Percentiles.now() - t0)
                }
                let end = Percentiles.now()
                let result = WriterResult(latencies: latencies, end: end, error: failure)
                results.withLock { $0.append(result) }
                group.leave()
            }
        }
        group.wait()
        return results.withLock { $0 }
    }

    /// One create's rows under fresh keys, in one `BEGIN IMMEDIATE` transaction, in the order the server writes them.
    static func create(
        _ t: Template, _ keys: (trip: String, quote: String, key: String), customer: String, in db: SQLiteDatabase
    ) throws {
        try db.transaction {
            if t.kind == TripKind.ride.rawValue {
                _ = try db.query(activeRide, [.text(customer), .text(t.kind)]) { $0.blob(0) }
            }
            var trip = t.trip
            trip[0] = .text(keys.trip)
            trip[4] = .text(customer)
            try db.run(insertTrip, trip)
            var change: [SQLiteValue] = [.text(keys.trip)]
            change += t.change
            change[4] = .text(customer)  // actor_id: the customer who asked
            try db.run(insertChange, change)
            var attempt = t.attempt
            attempt[0] = .text(keys.quote)
            attempt[1] = .text(customer)
            try db.run(insertAttempt, [attempt[0], attempt[1], .text(keys.trip), attempt[2], attempt[3], attempt[4]])
            for row in t.ledger {
                guard case .text(let movement) = row[0], case .text(let account) = row[2] else { continue }
                try db.run(
                    insertLedger,
                    [
                        .text(movement.replacingOccurrences(of: t.tripId, with: keys.trip)), row[1], .text(keys.trip),
                        .text(account.replacingOccurrences(of: t.customerId, with: customer)), row[3], row[4], row[5],
                    ])
            }
            var key: [SQLiteValue] = [.text(customer)]
            key += t.key.prefix(2)
            key.append(.text(keys.key))
            key += t.key.dropFirst(2)
            try db.run(insertKey, key)
        }
    }

    /// The newest trip's rows in `path` (version 1: as created).
    static func read(_ path: String) throws -> Template {
        let db = try SQLiteDatabase(path: path, readOnly: true)
        defer { db.close() }
        // Each column as it is stored: text, integer, real or blob, NULL kept.
        func text(_ row: SQLiteStatement, _ i: Int32) -> SQLiteValue {
            row.text(i).map { SQLiteValue.text($0) } ?? .null
        }
        func integer(_ row: SQLiteStatement, _ i: Int32) -> SQLiteValue { row.isNull(i) ? .null : .integer(row.int(i)) }
        func real(_ row: SQLiteStatement, _ i: Int32) -> SQLiteValue { row.isNull(i) ? .null : .real(row.double(i)) }
        func blob(_ row: SQLiteStatement, _ i: Int32) -> SQLiteValue { .blob(row.blob(i)) }
        func columns(_ row: SQLiteStatement, _ kinds: [(SQLiteStatement, Int32) -> SQLiteValue]) -> [SQLiteValue] {
            kinds.enumerated().map { i, read in read(row, Int32(i)) }
        }
        var t = Template()
        let tripColumns: [(SQLiteStatement, Int32) -> SQLiteValue] = [
            text, text, text, integer, text, text, text, integer, real, real, blob,
        ]
        guard
            let trip = try db.query(
                """
                SELECT id, kind, status, version, customer_id, provider_id, merchant_id, active, created_at, \
                updated_at, record
                FROM trips WHERE version = 1 ORDER BY created_at DESC LIMIT 1
                """, [], { row in columns(row, tripColumns) }
            ).first
        else { throw FanoutBench.Failure(description: "no created trip in \(path)") }
        guard case .text(let tripId) = trip[0], case .text(let kind) = trip[1], case .text(let customer) = trip[4],
            case .real = trip[8]
        else {
            throw FanoutBench.Failure(description: "the newest trip in \(path) has no id, kind, customer or time")
        }
        t.trip = trip; t.tripId = tripId; t.kind = kind; t.customerId = customer
        let id: [SQLiteValue] = [.text(tripId)]
        let changeColumns: [(SQLiteStatement, Int32) -> SQLiteValue] = [integer, text, text, text, real, real, text]
        guard
            let change = try db.query(
                """
                SELECT version, status, actor_role, actor_id, server_time, device_time, change_id FROM trip_changes \
                WHERE trip_id = ?1 AND version = 1
                """, id, { row in columns(row, changeColumns) }
            ).first
        else { throw FanoutBench.Failure(description: "trip \(tripId) has no change-log entry in \(path)") }
        t.change = change
        let attemptColumns: [(SQLiteStatement, Int32) -> SQLiteValue] = [text, text, text, real, blob]
        guard
            let attempt = try db.query(
                "SELECT quote_id, account_id, intent_id, created_at, record FROM payment_attempts WHERE trip_id = ?1",
                id,
                {
                    row in columns(row, attemptColumns)
                }
            ).first
        else { throw FanoutBench.Failure(description: "trip \(tripId) has no payment attempt in \(path)") }
        t.attempt = attempt
        let ledgerColumns: [(SQLiteStatement, Int32) -> SQLiteValue] = [text, text, text, integer, text, real]
        t.ledger = try db.query(
            "SELECT movement_id, kind, account, amount_minor, currency, at FROM ledger WHERE trip_id = ?1 ORDER BY seq",
            id
        ) { row in
            columns(row, ledgerColumns)
        }
        let keyColumns: [(SQLiteStatement, Int32) -> SQLiteValue] = [text, text, text, integer, text, blob, real]
        guard
            let key = try db.query(
                """
                SELECT method, path, fingerprint, status, content_type, body, created_at FROM idempotency_keys
                WHERE account_id = ?1 AND status = 201 AND instr(CAST(body AS TEXT), ?2) > 0 LIMIT 1
                """, [.text(customer), .text(tripId)], { row in columns(row, keyColumns) }
            ).first
        else {
            throw FanoutBench.Failure(description: "trip \(tripId) has no stored Idempotency-Key answer in \(path)")
        }
        t.key = key
        return t
    }
}
