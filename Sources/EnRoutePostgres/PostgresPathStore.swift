import Foundation
public import EnRouteDomain
import PostgresClient

/// Trip paths on PostgreSQL, in the trip database's `trip_paths` table (from `PostgresTripStore`'s migrations).
///
/// Each append is one multi-row insert in its own transaction on a pooled connection; concurrent appends run side by
/// side (the database's group commit gathers them). A fix repeated for the same trip and device time is kept once.
public final class PostgresPathStore: PathStore, Sendable {
    private let pool: PostgresPool

    /// Rows per statement at most, so one large batch does not become one huge statement.
    static var rowsPerStatement: Int { 500 }

    /// The paths of the database `tripStore` has brought up to date, on its connections.
    public init(tripStore: PostgresTripStore) { pool = tripStore.pool }

    public func append(_ points: [PathPoint]) async throws {
        guard !points.isEmpty else { return }
        do {
            try await pool.withConnection { db in
                try db.transaction {
                    for start in stride(from: 0, to: points.count, by: Self.rowsPerStatement) {
                        let chunk = points[start..<min(points.count, start + Self.rowsPerStatement)]
                        var values: [PostgresValue] = []
                        values.reserveCapacity(chunk.count * 9)
                        var rows: [String] = []
                        for point in chunk {
                            let n = values.count
                            rows.append("(" + (1...9).map { "$\(n + $0)" }.joined(separator: ", ") + ")")
                            values += [
                                .text(point.tripId), .double(point.recordedAt.timeIntervalSince1970),
                                .text(point.providerId),
                                .double(point.lat), .double(point.lng), .double(point.heading), .double(point.speed),
                                .double(point.accuracy), .double(point.receivedAt.timeIntervalSince1970),
                            ]
                        }
                        try db.run(
                            """
                            INSERT INTO trip_paths (trip_id, recorded_at, provider_id, lat, lng, heading, speed, \
                            accuracy, received_at)
                            VALUES \(rows.joined(separator: ", ")) ON CONFLICT (trip_id, recorded_at) DO NOTHING
                            """, values)
                    }
                }
            }
        } catch { throw PostgresTripStore.mapped(error) }
    }

    public func path(tripId: String) async throws -> [PathPoint] {
        do {
            return try await pool.withConnection { db in
                try db.query(
                    """
                    SELECT provider_id, lat, lng, heading, speed, accuracy, recorded_at, received_at FROM trip_paths
                    WHERE trip_id = $1 ORDER BY recorded_at
                    """, [.text(tripId)]
                ).map { row in
                    PathPoint(
                        tripId: tripId, providerId: row.text(0) ?? "", lat: row.double(1), lng: row.double(2),
                        heading: row.double(3),
                        speed: row.double(4), accuracy: row.double(5),
                        recordedAt: Date(timeIntervalSince1970: row.double(6)),
                        receivedAt: Date(timeIntervalSince1970: row.double(7)))
                }
            }
        } catch { throw PostgresTripStore.mapped(error) }
    }
}
