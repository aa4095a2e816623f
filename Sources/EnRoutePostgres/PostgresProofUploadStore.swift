public import Foundation
public import EnRouteDomain
import EnRouteModels
import PostgresClient

/// Proof upload state on PostgreSQL (`proof_uploads` and `trip_proofs`, migrated by `proof_upload_migrations`), on the
/// trip store's connections; the bytes are the `BlobStore`'s (a directory on disk).
public final class PostgresProofUploadStore: ProofUploadStore, Sendable {
    /// Schema migrations of the upload tables, applied in order once each.
    static let migrations: [String] = [
        """
        CREATE TABLE proof_uploads (
            id TEXT COLLATE "C" PRIMARY KEY, trip_id TEXT NOT NULL, upload_offset BIGINT NOT NULL, created_at DOUBLE \
        PRECISION NOT NULL,
            complete BOOLEAN NOT NULL, record BYTEA NOT NULL);
        CREATE INDEX proof_uploads_incomplete ON proof_uploads(created_at) WHERE NOT complete;
        CREATE TABLE trip_proofs (trip_id TEXT PRIMARY KEY, proof_id TEXT NOT NULL);
        """
    ]

    private let store: PostgresTripStore

    /// Opens (creating if needed) the upload tables in `tripStore`'s database.
    public init(tripStore: PostgresTripStore, now: @Sendable () -> Date = { Date() }) throws {
        store = tripStore
        try store.migrateCompanion(Self.migrations, table: "proof_upload_migrations", appliedAt: now())
    }

    public func upload(id: String) async throws -> ProofUpload? {
        try await store.perform { db in
            try db.query("SELECT record FROM proof_uploads WHERE id = $1", [.text(id)]).first.map {
                try Self.decode($0.bytes(0))
            }
        }
    }

    public func save(_ upload: ProofUpload) async throws {
        let values: [PostgresValue] = [
            .text(upload.id), .text(upload.tripId), .int(upload.offset), seconds(upload.createdAt),
            .bool(upload.isComplete),
            .bytea(Array(try WireCoding.encoder().encode(upload))),
        ]
        try await store.perform { db in
            try db.run(
                """
                INSERT INTO proof_uploads (id, trip_id, upload_offset, created_at, complete, record) VALUES ($1, $2, \
                $3, $4, $5, $6)
                ON CONFLICT (id) DO UPDATE SET trip_id = EXCLUDED.trip_id, upload_offset = EXCLUDED.upload_offset,
                created_at = EXCLUDED.created_at, complete = EXCLUDED.complete, record = EXCLUDED.record
                """, values)
        }
    }

    public func delete(id: String) async throws {
        try await store.perform { db in try db.run("DELETE FROM proof_uploads WHERE id = $1", [.text(id)]) }
    }

    public func incomplete(createdBefore cutoff: Date) async throws -> [ProofUpload] {
        try await store.perform { db in
            try db.query(
                "SELECT record FROM proof_uploads WHERE NOT complete AND created_at < $1 ORDER BY id", [seconds(cutoff)]
            )
            .map { try Self.decode($0.bytes(0)) }
        }
    }

    public func proofId(tripId: String) async throws -> String? {
        try await store.perform { db in
            try db.query("SELECT proof_id FROM trip_proofs WHERE trip_id = $1", [.text(tripId)]).first?.text(0)
        }
    }

    private static func decode(_ bytes: [UInt8]) throws -> ProofUpload {
        try WireCoding.decoder().decode(ProofUpload.self, from: Data(bytes))
    }
}
