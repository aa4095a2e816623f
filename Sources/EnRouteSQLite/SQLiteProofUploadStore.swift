public import Foundation
public import EnRouteDomain
import EnRouteModels
import SQLiteClient
import Synchronization

/// Proof upload state on SQLite (`proof_uploads` and `trip_proofs`, migrated by `proof_upload_migrations`) in the
/// trip database, written through the trip store's writer; the bytes are the `BlobStore`'s.
public final class SQLiteProofUploadStore: ProofUploadStore, @unchecked Sendable {
    /// Schema migrations of the upload tables, applied in order once each.
    static let migrations: [String] = [
        """
        CREATE TABLE proof_uploads (
            id TEXT PRIMARY KEY, trip_id TEXT NOT NULL, upload_offset INTEGER NOT NULL, created_at REAL NOT NULL,
            complete INTEGER NOT NULL, record BLOB NOT NULL);
        CREATE INDEX proof_uploads_incomplete ON proof_uploads(created_at) WHERE complete = 0;
        CREATE TABLE trip_proofs (trip_id TEXT PRIMARY KEY, proof_id TEXT NOT NULL);
        """
    ]

    private let writer: SQLiteWriter
    private let reader: Mutex<SQLiteDatabase>

    /// Opens (creating if needed) the upload tables in `tripStore`'s database.
    public init(tripStore: SQLiteTripStore, now: @Sendable () -> Date = { Date() }) throws {
        writer = tripStore.writer
        reader = try tripStore.companionReader(
            migrations: Self.migrations, table: "proof_upload_migrations", appliedAt: now())
    }

    public func upload(id: String) async throws -> ProofUpload? {
        try reader.withLock { db in
            try db.query("SELECT record FROM proof_uploads WHERE id = ?1", [.text(id)]) {
                try WireCoding.decoder().decode(ProofUpload.self, from: Data($0.blob(0)))
            }.first
        }
    }

    public func save(_ upload: ProofUpload) async throws {
        let record = Array(try WireCoding.encoder().encode(upload))
        try await writer.transaction { db in
            try db.run(
                "INSERT OR REPLACE INTO proof_uploads (id, trip_id, upload_offset, created_at, complete, record) "
                    + "VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                [
                    .text(upload.id), .text(upload.tripId), .integer(Int64(upload.offset)),
                    .real(upload.createdAt.timeIntervalSince1970),
                    .integer(upload.isComplete ? 1 : 0), .blob(record),
                ])
        }
    }

    public func delete(id: String) async throws {
        try await writer.transaction { db in try db.run("DELETE FROM proof_uploads WHERE id = ?1", [.text(id)]) }
    }

    public func incomplete(createdBefore cutoff: Date) async throws -> [ProofUpload] {
        try reader.withLock { db in
            try db.query(
                "SELECT record FROM proof_uploads WHERE complete = 0 AND created_at < ?1 ORDER BY id",
                [.real(cutoff.timeIntervalSince1970)]
            ) {
                try WireCoding.decoder().decode(ProofUpload.self, from: Data($0.blob(0)))
            }
        }
    }

    public func proofId(tripId: String) async throws -> String? {
        try reader.withLock { db in
            try db.query("SELECT proof_id FROM trip_proofs WHERE trip_id = ?1", [.text(tripId)]) { $0.text(0) }.first
                ?? nil
        }
    }
}
