public import Foundation
public import EnRouteDomain
import PostgresClient

/// The ETA error model's completed legs (`EtaLegSample`) on PostgreSQL, in `eta_samples` (migrated by `eta_migrations`)
/// beside the trips, on the trip store's connections.
public final class PostgresEtaSampleStore: EtaSampleStore, Sendable {
    /// Schema migrations of the calibration table, applied in order once each.
    static let migrations: [String] = [
        """
        CREATE TABLE eta_samples (
            trip_id TEXT NOT NULL, leg TEXT NOT NULL, road_class TEXT NOT NULL, hour_of_week INTEGER NOT NULL,
            predicted_seconds DOUBLE PRECISION NOT NULL, actual_seconds DOUBLE PRECISION NOT NULL, recorded_at DOUBLE \
        PRECISION NOT NULL,
            PRIMARY KEY (trip_id, leg));
        CREATE INDEX eta_samples_recorded ON eta_samples(recorded_at);
        """
    ]

    private let store: PostgresTripStore

    /// Opens (creating if needed) the calibration table in `tripStore`'s database.
    public init(tripStore: PostgresTripStore, now: @Sendable () -> Date = { Date() }) throws {
        store = tripStore
        try store.migrateCompanion(Self.migrations, table: "eta_migrations", appliedAt: now())
    }

    public func append(_ sample: EtaLegSample) async throws {
        try await store.perform { db in
            try db.run(
                """
                INSERT INTO eta_samples (trip_id, leg, road_class, hour_of_week, predicted_seconds, actual_seconds, \
                recorded_at)
                VALUES ($1, $2, $3, $4, $5, $6, $7)
                ON CONFLICT (trip_id, leg) DO UPDATE SET road_class = EXCLUDED.road_class, hour_of_week = \
                EXCLUDED.hour_of_week,
                predicted_seconds = EXCLUDED.predicted_seconds, actual_seconds = EXCLUDED.actual_seconds, recorded_at \
                = EXCLUDED.recorded_at
                """,
                [
                    .text(sample.tripId), .text(sample.leg), .text(sample.roadClass), .int(sample.hourOfWeek),
                    .double(sample.predictedSeconds), .double(sample.actualSeconds), seconds(sample.recordedAt),
                ])
        }
    }

    public func recent(limit: Int) throws -> [EtaLegSample] {
        try store.read { db in
            try db.query(
                """
                SELECT trip_id, leg, road_class, hour_of_week, predicted_seconds, actual_seconds, recorded_at \
                FROM eta_samples
                ORDER BY recorded_at DESC LIMIT $1
                """, [.int(max(0, limit))]
            ).map { row in
                EtaLegSample(
                    tripId: row.text(0) ?? "", leg: row.text(1) ?? "", roadClass: row.text(2) ?? "all",
                    hourOfWeek: Int(row.int(3)),
                    predictedSeconds: row.double(4), actualSeconds: row.double(5),
                    recordedAt: Date(timeIntervalSince1970: row.double(6)))
            }
        }.reversed()
    }
}
