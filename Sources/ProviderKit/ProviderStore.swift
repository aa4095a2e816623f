import Foundation
import SQLiteClient

/// The provider's device store: one SQLite file holding the point buffer, the step outbox and the local trip copies.
///
/// Every write is one transaction, so a process killed at any moment leaves either the whole change or none of it.
/// Reopening the same path after a crash or restart finds unsent fixes and steps exactly as they were.
public final class ProviderStore: @unchecked Sendable {
    // Unchecked: every use of `database` holds `lock`.
    private let lock = NSLock()
    private let database: SQLiteDatabase

    /// Opens (creating if needed) the store at `path`.
    public init(path: String) throws {
        let database = try SQLiteDatabase(path: path)
        try database.execute(Self.schema)
        try database.execute(Self.proofSchema)
        self.database = database
    }

    /// Closes the file; later calls throw. A test "kills the process" this way and reopens the same path.
    public func close() {
        lock.withLock { database.close() }
    }

    static let schema = """
        CREATE TABLE IF NOT EXISTS point_buffer (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            lat REAL NOT NULL, lng REAL NOT NULL, heading REAL NOT NULL, speed REAL NOT NULL, accuracy REAL NOT NULL,
            recorded_at REAL NOT NULL,
            batch_id TEXT
        );
        CREATE INDEX IF NOT EXISTS point_buffer_batch ON point_buffer(batch_id);
        CREATE TABLE IF NOT EXISTS step_outbox (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            change_id TEXT NOT NULL UNIQUE,
            trip_id TEXT NOT NULL,
            step TEXT NOT NULL,
            device_time REAL NOT NULL,
            lat REAL, lng REAL
        );
        CREATE TABLE IF NOT EXISTS local_trips (
            trip_id TEXT PRIMARY KEY,
            version INTEGER NOT NULL,
            snapshot BLOB NOT NULL
        );
        CREATE TABLE IF NOT EXISTS device_state (key TEXT PRIMARY KEY, value BLOB NOT NULL);
        """

    /// Runs `body` on the connection inside one transaction.
    func write<T>(_ body: (SQLiteDatabase) throws -> T) throws -> T {
        try lock.withLock { try database.transaction { try body(database) } }
    }

    /// Runs `body` on the connection without a transaction (single reads).
    func read<T>(_ body: (SQLiteDatabase) throws -> T) throws -> T {
        try lock.withLock { try body(database) }
    }
}

extension Date {
    var storedValue: SQLiteValue { .real(timeIntervalSince1970) }
    init(stored seconds: Double) { self.init(timeIntervalSince1970: seconds) }
}
