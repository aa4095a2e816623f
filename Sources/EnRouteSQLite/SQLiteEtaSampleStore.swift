public import Foundation
public import EnRouteDomain
import SQLiteClient
import Synchronization

/// The ETA error model's completed legs (`EtaLegSample`) on SQLite, in a table of their own (`eta_samples`,
/// migrated by `eta_migrations`) in the trip database, written through the trip store's writer.
public final class SQLiteEtaSampleStore: EtaSampleStore, @unchecked Sendable {
    /// Schema migrations of the calibration table, applied in order once each.
    static let migrations: [String] = [
        """
        CREATE TABLE eta_samples (
            trip_id TEXT NOT NULL, leg TEXT NOT NULL, road_class TEXT NOT NULL, hour_of_week INTEGER NOT NULL,
            predicted_seconds REAL NOT NULL, actual_seconds REAL NOT NULL, recorded_at REAL NOT NULL,
            PRIMARY KEY (trip_id, leg));
        CREATE INDEX eta_samples_recorded ON eta_samples(recorded_at);
        """
    ]

    private let writer: SQLiteWriter
    private let reader: Mutex<SQLiteDatabase>

    /// Opens (creating if needed) the calibration table in `tripStore`'s database.
    public init(tripStore: SQLiteTripStore, now: @Sendable () -> Date = { Date() }) throws {
        writer = tripStore.writer
        reader = try tripStore.companionReader(migrations: Self.migrations, table: "eta_migrations", appliedAt: now())
    }

    /// The calibration schema version now in force.
    public var schemaVersion: Int { Self.migrations.count }

    public func append(_ sample: EtaLegSample) async throws {
        try await writer.transaction { db in
            try db.run(
                """
                INSERT OR REPLACE INTO eta_samples (trip_id, leg, road_class, hour_of_week, predicted_seconds, \
                actual_seconds, recorded_at)
                VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
                """,
                [
                    .text(sample.tripId), .text(sample.leg), .text(sample.roadClass),
                    .integer(Int64(sample.hourOfWeek)),
                    .real(sample.predictedSeconds), .real(sample.actualSeconds),
                    .real(sample.recordedAt.timeIntervalSince1970),
                ])
        }
    }

    public func recent(limit: Int) throws -> [EtaLegSample] {
        try reader.withLock { db in
            try db.query(
                """
                SELECT trip_id, leg, road_class, hour_of_week, predicted_seconds, actual_seconds, recorded_at \
                FROM eta_samples
                ORDER BY recorded_at DESC LIMIT ?1
                """, [.integer(Int64(max(0, limit)))]
            ) { row in
                EtaLegSample(
                    tripId: row.text(0) ?? "", leg: row.text(1) ?? "", roadClass: row.text(2) ?? "all",
                    hourOfWeek: Int(row.int(3)),
                    predictedSeconds: row.double(4), actualSeconds: row.double(5),
                    recordedAt: Date(timeIntervalSince1970: row.double(6)))
            }
        }.reversed()
    }
}
