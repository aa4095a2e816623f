import Foundation
import EnRouteModels
import SQLiteClient

extension ProviderStore {
    /// Adds a kept fix to the buffer and remembers it as the last kept, in one transaction.
    func appendFix(_ fix: LocationFix) throws {
        let remembered = try WireCoding.encoder().encode(fix)
        try write { db in
            try db.run(
                """
                INSERT INTO point_buffer (lat, lng, heading, speed, accuracy, recorded_at) VALUES (?1, ?2, \
                ?3, ?4, ?5, ?6)
                """,
                [
                    .real(fix.lat), .real(fix.lng), .real(fix.heading), .real(fix.speed), .real(fix.accuracy),
                    fix.recordedAt.storedValue,
                ])
            try db.run(
                "INSERT OR REPLACE INTO device_state (key, value) VALUES ('lastKeptFix', ?1)",
                [.blob(Array(remembered))])
        }
    }

    /// The last fix the filter kept, even if it has since been uploaded.
    func lastKeptFix() throws -> LocationFix? {
        let blobs = try read { db in
            try db.query("SELECT value FROM device_state WHERE key = 'lastKeptFix'") { $0.blob(0) }
        }
        guard let blob = blobs.first else { return nil }
        return try WireCoding.decoder().decode(LocationFix.self, from: Data(blob))
    }

    /// The batch to upload next, oldest fixes first: the open (sent, unacknowledged) batch with its id unchanged,
    /// else up to `limit` unbatched fixes under a new id from `makeID`; nil when the buffer is empty.
    func nextBatch(limit: Int, makeID: () -> String) throws -> LocationBatch? {
        try write { db in
            if let open = try db.query(
                "SELECT batch_id FROM point_buffer WHERE batch_id IS NOT NULL ORDER BY seq LIMIT 1", [], { $0.text(0) }
            ).first,
                let id = open
            {
                return LocationBatch(batchId: id, fixes: try Self.fixes(in: id, db))
            }
            let newest = try db.query(
                "SELECT seq FROM (SELECT seq FROM point_buffer WHERE batch_id IS NULL ORDER BY seq LIMIT ?1) ORDER BY "
                    + "seq DESC LIMIT 1",
                [.integer(Int64(limit))]
            ) { $0.int(0) }
            guard let last = newest.first else { return nil }
            let id = makeID()
            try db.run(
                "UPDATE point_buffer SET batch_id = ?1 WHERE batch_id IS NULL AND seq <= ?2",
                [.text(id), .integer(last)])
            return LocationBatch(batchId: id, fixes: try Self.fixes(in: id, db))
        }
    }

    /// Deletes an acknowledged batch's fixes.
    func deleteBatch(_ batchId: String) throws {
        try write { db in try db.run("DELETE FROM point_buffer WHERE batch_id = ?1", [.text(batchId)]) }
    }

    /// How many fixes wait to be acknowledged.
    func bufferedFixCount() throws -> Int {
        try read { db in try db.query("SELECT COUNT(*) FROM point_buffer") { Int($0.int(0)) }.first ?? 0 }
    }

    private static func fixes(in batchId: String, _ db: SQLiteDatabase) throws -> [LocationFix] {
        try db.query(
            "SELECT lat, lng, heading, speed, accuracy, recorded_at FROM point_buffer WHERE batch_id = ?1 ORDER BY seq",
            [.text(batchId)]
        ) { row in
            LocationFix(
                lat: row.double(0), lng: row.double(1), heading: row.double(2), speed: row.double(3),
                accuracy: row.double(4),
                recordedAt: Date(stored: row.double(5)))
        }
    }
}
