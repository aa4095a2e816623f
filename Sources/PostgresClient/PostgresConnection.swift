public import Foundation
import CLibPQ

/// One libpq connection. Every call blocks its thread until the server answers, so callers run it off Swift's
/// cooperative pool (`PostgresPool` does, on the connection's own serial `queue`). Not thread-safe: its owner
/// (the pool's lessee) serialises use.
public final class PostgresConnection: @unchecked Sendable {
    private var handle: OpaquePointer?
    /// The serial queue async callers run this connection's blocking calls on.
    let queue: DispatchQueue
    /// Set once a call failed because the connection or server went away; the pool drops it then.
    public private(set) var isBroken = false

    /// Connects to `url` (`postgres://user@host:port/db`, any libpq URI), with `searchPath` as the schema search
    /// path when given. A malformed URL or a server that cannot be reached is a `PostgresError` saying which.
    public init(url: String, searchPath: String? = nil) throws {
        try Self.validate(url)
        // The URL may override the defaults before it; the search path comes after it. The application name says
        // which schema a connection works in (pg_stat_activity shows it).
        var keywords = ["connect_timeout", "application_name", "dbname"]
        var values = ["10", String("enroute:\(searchPath ?? "public")".prefix(63)), url]
        if let searchPath {
            keywords.append("options")
            values.append("-c search_path=\(searchPath)")
        }
        let conn = Self.withCStrings(keywords) { k in Self.withCStrings(values) { v in PQconnectdbParams(k, v, 1) } }
        guard let conn, PQstatus(conn) == CONNECTION_OK else {
            let message = conn.map { String(cString: PQerrorMessage($0)) } ?? "out of memory"
            PQfinish(conn)
            throw PostgresError.connectionFailure(
                "cannot connect to \(Self.redacted(url)): " + message.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        // Notices (e.g. "already exists, skipping") would go to stderr by default.
        PQsetNoticeProcessor(conn, { _, _ in }, nil)
        handle = conn
        queue = DispatchQueue(label: "enroute.postgres.connection")
    }

    deinit { close() }

    /// Closes the connection; later calls throw. Safe to call twice.
    public func close() {
        PQfinish(handle)
        handle = nil
    }

    /// Runs one or more statements without parameters or results.
    public func execute(_ sql: String) throws {
        let result = try check(PQexec(try open(), sql))
        PQclear(result)
    }

    /// Rows of `sql` with `values` bound to `$1`, `$2`, ….
    public func query(_ sql: String, _ values: [PostgresValue] = []) throws -> [PostgresRow] {
        let result = try exec(sql, values)
        defer { PQclear(result) }
        let rows = Int(PQntuples(result)), columns = Int(PQnfields(result))
        var out: [PostgresRow] = []
        out.reserveCapacity(rows)
        for r in 0..<Int32(rows) {
            var fields: [String?] = []
            fields.reserveCapacity(columns)
            for c in 0..<Int32(columns) {
                fields.append(PQgetisnull(result, r, c) == 1 ? nil : String(cString: PQgetvalue(result, r, c)))
            }
            out.append(PostgresRow(values: fields))
        }
        return out
    }

    /// Runs `sql` with `values` bound; returns how many rows it inserted, updated or deleted.
    @discardableResult
    public func run(_ sql: String, _ values: [PostgresValue] = []) throws -> Int {
        let result = try exec(sql, values)
        defer { PQclear(result) }
        return Int(String(cString: PQcmdTuples(result))) ?? 0
    }

    /// How a transaction sees concurrent ones.
    public enum Isolation: String, Sendable {
        case readCommitted = "READ COMMITTED", repeatableRead = "REPEATABLE READ", serializable = "SERIALIZABLE"
    }

    /// Runs `body` inside `BEGIN` … `COMMIT` at `isolation`, rolling back if it (or the commit) throws.
    public func transaction<T>(_ isolation: Isolation = .readCommitted, _ body: () throws -> T) throws -> T {
        try begin(isolation)
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            rollback()
            throw error
        }
    }

    /// Starts a transaction at `isolation` (for a body that spans several calls; end it with `commit()` or
    /// `rollback()`).
    public func begin(_ isolation: Isolation) throws { try execute("BEGIN ISOLATION LEVEL \(isolation.rawValue)") }
    /// Commits the open transaction.
    public func commit() throws { try execute("COMMIT") }
    /// Rolls back the open transaction, ignoring errors (a broken connection has nothing to roll back).
    public func rollback() { if !isBroken { try? execute("ROLLBACK") } }

    /// Brings a schema up to date: applies each of `migrations` (version = position + 1) that `table` has no record of,
    /// with its record, stamped `appliedAt`, all in one transaction (few round trips: a backend opens a dozen stores).
    /// Concurrent migrators of one schema take turns on a transaction-scoped advisory lock on the table's name.
    public func migrate(_ migrations: [String], table: String, appliedAt: Date) throws {
        guard table.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }) else {
            throw PostgresError(sqlState: "42602", message: "not a plain table name: \(table)")
        }
        try begin(.readCommitted)
        do {
            try execute(
                """
                SELECT pg_advisory_xact_lock(hashtext(current_schema() || '.\(table)'));
                CREATE TABLE IF NOT EXISTS \(table) (version INTEGER PRIMARY KEY, applied_at DOUBLE PRECISION NOT NULL)
                """)
            let applied = Set(try query("SELECT version FROM \(table)").map { Int($0.int(0)) })
            for (index, sql) in migrations.enumerated() where !applied.contains(index + 1) {
                try execute(
                    sql
                        + ";\nINSERT INTO \(table) (version, applied_at) VALUES (\(index + 1), "
                        + "\(Self.format(appliedAt.timeIntervalSince1970)))"
                )
            }
            try commit()
        } catch {
            rollback()
            throw error
        }
    }

    private func open() throws -> OpaquePointer {
        guard let handle, !isBroken else { throw PostgresError.connectionFailure("the connection is closed") }
        return handle
    }

    private func exec(_ sql: String, _ values: [PostgresValue]) throws -> OpaquePointer {
        let conn = try open()
        // Text for everything but bytea, which goes as raw bytes (format 1, type bytea).
        let texts: [[UInt8]?] = values.map { value in
            switch value {
            case .null: nil
            case .int(let v): Array(String(v).utf8) + [0]
            case .double(let v): Array(Self.format(v).utf8) + [0]
            case .text(let v): Array(v.utf8) + [0]
            case .bool(let v): Array((v ? "t" : "f").utf8) + [0]
            case .bytea(let v): v
            }
        }
        let types: [Oid] = values.map { if case .bytea = $0 { 17 } else { 0 } }
        let formats: [Int32] = values.map { if case .bytea = $0 { 1 } else { 0 } }
        let lengths: [Int32] = texts.map { Int32($0?.count ?? 0) }
        let result: OpaquePointer? = Self.withPointers(texts) { pointers in
            PQexecParams(conn, sql, Int32(values.count), types, pointers, lengths, formats, 0)
        }
        return try check(result)
    }

    /// The result if it succeeded; otherwise its SQLSTATE, message and detail as a `PostgresError` (and the
    /// connection marked broken when it is gone).
    private func check(_ result: OpaquePointer?) throws -> OpaquePointer {
        let status = result.map(PQresultStatus) ?? PGRES_FATAL_ERROR
        if let result, status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK { return result }
        defer { PQclear(result) }
        func field(_ code: Character) -> String? {
            guard let result, let p = PQresultErrorField(result, Int32(code.asciiValue!)) else { return nil }
            return String(cString: p)
        }
        let connectionMessage = handle.map { String(cString: PQerrorMessage($0)) } ?? ""
        let message = field("M") ?? connectionMessage.trimmingCharacters(in: .whitespacesAndNewlines)
        let gone = handle.map { PQstatus($0) != CONNECTION_OK } ?? true
        let error = PostgresError(
            sqlState: field("C") ?? (gone ? "08006" : "XX000"), message: message.isEmpty ? "no answer" : message,
            detail: field("D"))
        if gone || error.isConnectionLoss { isBroken = true }
        throw error
    }

    /// A double in the shortest text that reads back as the same bits.
    static func format(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value > 0 ? "Infinity" : "-Infinity" }
        return "\(value)"
    }

    /// Checks the URL's form before libpq sees it, so a typo is named rather than taken for a database name.
    static func validate(_ url: String) throws {
        guard url.hasPrefix("postgres://") || url.hasPrefix("postgresql://") else {
            throw PostgresError(
                sqlState: "08001", message: "not a PostgreSQL URL (postgres://user@host:port/db): \(redacted(url))")
        }
        var error: UnsafeMutablePointer<CChar>?
        let options = PQconninfoParse(url, &error)
        defer { PQconninfoFree(options) }
        if options == nil {
            let message = error.map { String(cString: $0) } ?? "malformed"
            PQfreemem(error)
            throw PostgresError(
                sqlState: "08001",
                message: "malformed PostgreSQL URL \(redacted(url)): "
                    + message.trimmingCharacters(in: .whitespacesAndNewlines))
        }
    }

    /// `url` with any password replaced by `***`, for messages.
    static func redacted(_ url: String) -> String {
        guard let scheme = url.range(of: "://"), let at = url[scheme.upperBound...].firstIndex(of: "@") else {
            return url
        }
        let userinfo = url[scheme.upperBound..<at]
        guard let colon = userinfo.firstIndex(of: ":") else { return url }
        return String(url[..<url.index(after: colon)]) + "***" + String(url[at...])
    }

    private static func withCStrings<R>(_ strings: [String], _ body: ([UnsafePointer<CChar>?]) -> R) -> R {
        let copies = strings.map { strdup($0) }
        defer { copies.forEach { free($0) } }
        return body(copies.map { UnsafePointer($0) } + [nil])
    }

    private static func withPointers<R>(_ buffers: [[UInt8]?], _ body: ([UnsafePointer<CChar>?]) -> R) -> R {
        var pointers: [UnsafePointer<CChar>?] = []
        var held: [UnsafeMutablePointer<UInt8>] = []
        defer { held.forEach { $0.deallocate() } }
        for buffer in buffers {
            guard let buffer else { pointers.append(nil); continue }
            let p = UnsafeMutablePointer<UInt8>.allocate(capacity: max(1, buffer.count))
            p.initialize(from: buffer, count: buffer.count)
            held.append(p)
            pointers.append(UnsafeRawPointer(p).assumingMemoryBound(to: CChar.self))
        }
        return body(pointers)
    }
}
