public import Foundation
// The SDK ships SQLite on Apple platforms; Linux links the system library through CSQLite.
#if canImport(SQLite3)
import SQLite3
#else
import CSQLite
#endif
#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Writes a file's data through to the disk: `fdatasync` on Linux; on Darwin, which has no `fdatasync` and whose
/// `fsync` leaves the data in the drive's cache, `F_FULLFSYNC`, falling back to `fsync` where the file system refuses
/// it.
private func syncData(_ fd: Int32) -> Bool {
    #if canImport(Darwin)
    return fcntl(fd, F_FULLFSYNC) == 0 || fsync(fd) == 0
    #else
    return fdatasync(fd) == 0
    #endif
}

/// Closes a descriptor (a free function: inside `SQLiteDatabase`, `close` is the connection's own method).
private func closeDescriptor(_ fd: Int32) {
    _ = close(fd)
}

/// An error from SQLite, with its message.
public struct SQLiteError: Error, CustomStringConvertible, Sendable {
    /// The SQLite result code.
    public let code: Int32
    /// SQLite's explanation.
    public let message: String
    /// "SQLite error CODE: MESSAGE".
    public var description: String { "SQLite error \(code): \(message)" }
    /// An error with SQLite's result `code` and `message`.
    public init(code: Int32, message: String) { self.code = code; self.message = message }
}

/// One SQLite connection with a statement cache. Not thread-safe: its owner serialises use.
public final class SQLiteDatabase {
    private var handle: OpaquePointer?
    private var statements: [String: SQLiteStatement] = [:]
    private var walHook: Unmanaged<WALHook>?

    /// Opens (creating if needed) the database at `path` in WAL mode.
    public init(path: String, readOnly: Bool = false) throws {
        let flags =
            readOnly
            ? SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX
            : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let rc = sqlite3_open_v2(path, &handle, flags, nil)
        guard rc == SQLITE_OK else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open"
            sqlite3_close(handle)
            throw SQLiteError(code: rc, message: "\(message) (\(path))")
        }
        sqlite3_busy_timeout(handle, 5_000)
        if !readOnly {
            try execute("PRAGMA journal_mode=WAL")
            // WAL + NORMAL loses nothing when the process dies; only an OS crash can drop the last commits.
            try execute("PRAGMA synchronous=NORMAL")
            try execute("PRAGMA foreign_keys=ON")
        }
    }

    deinit { close() }

    /// Closes the connection; later calls throw. Safe to call twice.
    public func close() {
        statements.values.forEach { $0.finalize() }
        statements = [:]
        sqlite3_close_v2(handle)
        handle = nil
        walHook?.release()
        walHook = nil
    }

    /// Calls `body` with the write-ahead log's size in pages after each commit on this connection. The
    /// connection then no longer checkpoints by itself: the owner does, with `checkpoint()` here or on another one.
    public func onCommit(walPages body: @escaping (Int) -> Void) {
        let box = Unmanaged.passRetained(WALHook(body))
        walHook?.release()
        walHook = box
        sqlite3_wal_hook(
            handle,
            { context, _, _, pages in
                guard let context else { return SQLITE_OK }
                Unmanaged<WALHook>.fromOpaque(context).takeUnretainedValue().body(Int(pages))
                return SQLITE_OK
            }, box.toOpaque())
    }

    /// Copies what it can of the write-ahead log into the database without waiting for any reader or writer
    /// (SQLite's passive checkpoint): the log's size in pages and how many of them are now in the database.
    @discardableResult
    public func checkpoint() throws -> (walPages: Int, checkpointed: Int) {
        guard handle != nil else { throw SQLiteError(code: SQLITE_MISUSE, message: "the database is closed") }
        var log: Int32 = 0, done: Int32 = 0
        let rc = sqlite3_wal_checkpoint_v2(handle, nil, SQLITE_CHECKPOINT_PASSIVE, &log, &done)
        guard rc == SQLITE_OK else { throw lastError(rc) }
        return (Int(log), Int(done))
    }

    /// Writes the write-ahead log's pages written so far through to the disk (an fdatasync of the `-wal` file), so that
    /// the sync a checkpoint starts with finds little left to write; false when the log could not be opened or synced.
    @discardableResult
    public func syncLog() -> Bool {
        guard let handle, let name = sqlite3_db_filename(handle, "main") else { return false }
        let fd = open(String(cString: name) + "-wal", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { closeDescriptor(fd) }
        return syncData(fd)
    }

    /// Runs one or more statements without results.
    public func execute(_ sql: String) throws {
        guard handle != nil else { throw SQLiteError(code: SQLITE_MISUSE, message: "the database is closed") }
        var error: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(handle, sql, nil, nil, &error)
        if rc != SQLITE_OK {
            let message = error.map { String(cString: $0) } ?? "exec failed"
            sqlite3_free(error)
            throw SQLiteError(code: rc, message: message)
        }
    }

    /// A prepared statement for `sql`, reset and cached for reuse.
    public func statement(_ sql: String) throws -> SQLiteStatement {
        if let cached = statements[sql] {
            cached.reset()
            return cached
        }
        guard handle != nil else { throw SQLiteError(code: SQLITE_MISUSE, message: "the database is closed") }
        var raw: OpaquePointer?
        let rc = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &raw, nil)
        guard rc == SQLITE_OK, let raw else { throw lastError(rc) }
        let statement = SQLiteStatement(raw, db: self)
        statements[sql] = statement
        return statement
    }

    /// Runs `sql` with `values` bound in order, for statements without results.
    public func run(_ sql: String, _ values: [SQLiteValue]) throws {
        let statement = try self.statement(sql)
        try statement.bind(values)
        while try statement.step() {}
    }

    /// Whether a transaction is open on this connection (SQLite rolls one back by itself after some errors).
    public var inTransaction: Bool { handle != nil && sqlite3_get_autocommit(handle) == 0 }

    /// Rows changed by the last INSERT, UPDATE or DELETE on this connection.
    public var changes: Int { Int(sqlite3_changes(handle)) }

    /// Rows of `sql` with `values` bound, each read by `row`.
    public func query<T>(
        _ sql: String, _ values: [SQLiteValue] = [], _ row: (SQLiteStatement) throws -> T
    ) throws -> [T] {
        let statement = try self.statement(sql)
        try statement.bind(values)
        var out: [T] = []
        while try statement.step() { out.append(try row(statement)) }
        return out
    }

    /// Runs `body` inside `BEGIN IMMEDIATE` … `COMMIT`, rolling back if it throws.
    public func transaction<T>(_ body: () throws -> T) throws -> T {
        try execute("BEGIN IMMEDIATE")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }

    /// Brings a schema up to date: applies each of `migrations` (version = position + 1) that `table` has
    /// no record of, each in its own transaction with its record, stamped `appliedAt`.
    public func migrate(_ migrations: [String], table: String, appliedAt: Date) throws {
        try execute("CREATE TABLE IF NOT EXISTS \(table) (version INTEGER PRIMARY KEY, applied_at REAL NOT NULL)")
        let applied = Set(try query("SELECT version FROM \(table)") { Int($0.int(0)) })
        for (index, sql) in migrations.enumerated() where !applied.contains(index + 1) {
            try transaction {
                try execute(sql)
                try run(
                    "INSERT INTO \(table) (version, applied_at) VALUES (?1, ?2)",
                    [.integer(Int64(index + 1)), .real(appliedAt.timeIntervalSince1970)])
            }
        }
    }

    func lastError(_ rc: Int32) -> SQLiteError {
        SQLiteError(code: rc, message: handle.map { String(cString: sqlite3_errmsg($0)) } ?? "unknown")
    }
}

/// The closure behind a connection's WAL hook, kept alive while the hook is set.
private final class WALHook {
    let body: (Int) -> Void
    init(_ body: @escaping (Int) -> Void) { self.body = body }
}

/// A value bound to a statement parameter.
public enum SQLiteValue: Sendable {
    case null, integer(Int64), real(Double), text(String), blob([UInt8])
}

/// A prepared statement; columns are read by index while positioned on a row.
public final class SQLiteStatement {
    private let raw: OpaquePointer
    private unowned let db: SQLiteDatabase
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    init(_ raw: OpaquePointer, db: SQLiteDatabase) { self.raw = raw; self.db = db }

    func finalize() { sqlite3_finalize(raw) }

    func reset() {
        sqlite3_reset(raw)
        sqlite3_clear_bindings(raw)
    }

    /// Binds values to `?1`, `?2`, ...
    public func bind(_ values: [SQLiteValue]) throws {
        for (i, value) in values.enumerated() {
            let index = Int32(i + 1)
            let rc: Int32
            switch value {
            case .null: rc = sqlite3_bind_null(raw, index)
            case .integer(let v): rc = sqlite3_bind_int64(raw, index, v)
            case .real(let v): rc = sqlite3_bind_double(raw, index, v)
            case .text(let v): rc = sqlite3_bind_text(raw, index, v, -1, Self.transient)
            case .blob(let v):
                rc = v.withUnsafeBytes {
                    sqlite3_bind_blob(raw, index, $0.baseAddress, Int32($0.count), Self.transient)
                }
            }
            guard rc == SQLITE_OK else { throw db.lastError(rc) }
        }
    }

    /// Advances to the next row; false when done.
    public func step() throws -> Bool {
        let rc = sqlite3_step(raw)
        if rc == SQLITE_ROW { return true }
        if rc == SQLITE_DONE { return false }
        throw db.lastError(rc)
    }

    /// The column as an integer.
    public func int(_ column: Int32) -> Int64 { sqlite3_column_int64(raw, column) }
    /// The column as a double.
    public func double(_ column: Int32) -> Double { sqlite3_column_double(raw, column) }
    /// True when the column is NULL.
    public func isNull(_ column: Int32) -> Bool { sqlite3_column_type(raw, column) == SQLITE_NULL }
    /// The column as UTF-8 text; nil when NULL.
    public func text(_ column: Int32) -> String? {
        guard let p = sqlite3_column_text(raw, column) else { return nil }
        return String(cString: p)
    }
    /// The column's bytes; empty when NULL.
    public func blob(_ column: Int32) -> [UInt8] {
        let count = Int(sqlite3_column_bytes(raw, column))
        guard count > 0, let p = sqlite3_column_blob(raw, column) else { return [] }
        return Array(UnsafeRawBufferPointer(start: p, count: count))
    }
}
