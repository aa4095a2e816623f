import Foundation
public import EnRouteDomain
import SQLiteClient
import Synchronization

/// Trip paths on SQLite, in the trip database's `trip_paths` table, with group commit.
///
/// Appends that arrive while a write is running are gathered and written together in the next
/// transaction, so many providers' batches share one commit; each caller returns once its points
/// are committed. The table comes from `SQLiteTripStore`'s migrations: open the trip store first.
public final class SQLitePathStore: PathStore, @unchecked Sendable {
    private struct Append {
        let points: [PathPoint]
        let waiter: CheckedContinuation<Void, any Error>
    }

    private struct Pending {
        var appends: [Append] = []
        var scheduled = false
    }

    /// Rows per transaction at most (whole appends), so a trip's own write waits behind short commits.
    static var rowsPerCommit: Int { 256 }

    private let writer: SQLiteWriter
    private let reader: Mutex<SQLiteDatabase>
    private let pending = Mutex(Pending())

    private static let insert = """
        INSERT OR IGNORE INTO trip_paths (trip_id, recorded_at, provider_id, lat, lng, heading, speed, accuracy, \
        received_at)
        VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
        """

    /// Opens the paths of the trip database `tripStore` has brought up to date, written through its
    /// writer: trips and paths take turns on one connection instead of contending for SQLite's lock.
    public convenience init(tripStore: SQLiteTripStore) throws {
        try self.init(writer: tripStore.writer, path: tripStore.path)
    }

    /// Opens the paths in the database at `path`, whose schema must already include `trip_paths`,
    /// with a writer of their own.
    public convenience init(path: String) throws {
        try self.init(writer: SQLiteWriter(path: path, label: "enroute.sqlite.paths"), path: path)
    }

    private init(writer: SQLiteWriter, path: String) throws {
        self.writer = writer
        reader = Mutex(try SQLiteDatabase(path: path))
        _ = try reader.withLock { db in try db.query("SELECT 1 FROM trip_paths LIMIT 1") { _ in 1 } }
    }

    public func append(_ points: [PathPoint]) async throws {
        guard !points.isEmpty else { return }
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let schedule = pending.withLock { p -> Bool in
                p.appends.append(Append(points: points, waiter: continuation))
                defer { p.scheduled = true }
                return !p.scheduled
            }
            if schedule { writer.async { self.drain($0) } }
        }
    }

    public func path(tripId: String) async throws -> [PathPoint] {
        try reader.withLock { db in
            try db.query(
                """
                SELECT provider_id, lat, lng, heading, speed, accuracy, recorded_at, received_at FROM trip_paths
                WHERE trip_id = ?1 ORDER BY recorded_at
                """, [.text(tripId)]
            ) { row in
                PathPoint(
                    tripId: tripId, providerId: row.text(0) ?? "", lat: row.double(1), lng: row.double(2),
                    heading: row.double(3),
                    speed: row.double(4), accuracy: row.double(5),
                    recordedAt: Date(timeIntervalSince1970: row.double(6)),
                    receivedAt: Date(timeIntervalSince1970: row.double(7)))
            }
        }
    }

    /// Writes what has gathered, up to `rowsPerCommit` rows of whole appends, in one transaction (on the
    /// writer queue), and queues itself again behind other writers while appends remain.
    private func drain(_ db: SQLiteDatabase) {
        let (batch, more) = pending.withLock { p -> ([Append], Bool) in
            var rows = 0, count = 0
            while count < p.appends.count, rows < Self.rowsPerCommit {
                rows += p.appends[count].points.count
                count += 1
            }
            let batch = Array(p.appends.prefix(count))
            p.appends.removeFirst(count)
            p.scheduled = !p.appends.isEmpty
            return (batch, p.scheduled)
        }
        let result = Result {
            try db.transaction {
                for point in batch.lazy.flatMap(\.points) {
                    try db.run(
                        Self.insert,
                        [
                            .text(point.tripId), .real(point.recordedAt.timeIntervalSince1970), .text(point.providerId),
                            .real(point.lat), .real(point.lng), .real(point.heading), .real(point.speed),
                            .real(point.accuracy), .real(point.receivedAt.timeIntervalSince1970),
                        ])
                }
            }
        }
        for append in batch { append.waiter.resume(with: result) }
        if more { writer.async { self.drain($0) } }
    }
}
