import Foundation
import SQLiteKit

/// A database's one writer connection and the serial queue every write to it goes through, so that
/// stores sharing the file (trips, paths) take turns instead of meeting SQLite's busy lock and its sleeps.
final class SQLiteWriter: @unchecked Sendable {
    /// Touched only on the queue (or before any work is queued, during migrations).
    let db: SQLiteDatabase
    private let queue: DispatchQueue

    init(path: String, label: String) throws {
        db = try SQLiteDatabase(path: path)
        queue = DispatchQueue(label: label)
    }

    /// Runs `work` with the connection after every write queued before it.
    func async(_ work: @escaping @Sendable (SQLiteDatabase) -> Void) {
        queue.async { work(self.db) }
    }
}
