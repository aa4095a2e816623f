import Foundation
import EnRouteModels
import SQLiteClient

/// The proof capture queue's rows: each proof's bytes and metadata, where its upload lives once created and the
/// offset the server last acknowledged; and which step change names which proof.
extension ProviderStore {
    static let proofSchema = """
        CREATE TABLE IF NOT EXISTS proof_queue (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            proof_id TEXT NOT NULL UNIQUE,
            trip_id TEXT NOT NULL,
            kind TEXT NOT NULL,
            content_type TEXT NOT NULL,
            bytes BLOB NOT NULL,
            location TEXT,
            acknowledged INTEGER NOT NULL DEFAULT 0
        );
        CREATE TABLE IF NOT EXISTS step_proofs (change_id TEXT PRIMARY KEY, proof_id TEXT NOT NULL);
        """

    func enqueue(_ proof: PendingProof, bytes: [UInt8]) throws {
        try write { db in
            try db.run(
                "INSERT INTO proof_queue (proof_id, trip_id, kind, content_type, bytes) VALUES (?1, ?2, ?3, ?4, ?5)",
                [
                    .text(proof.proofId), .text(proof.tripId), .text(proof.kind.rawValue), .text(proof.contentType),
                    .blob(bytes),
                ])
        }
    }

    func pendingProofs() throws -> [PendingProof] {
        try read { db in
            try db.query(
                "SELECT proof_id, trip_id, kind, content_type, length(bytes), location, acknowledged FROM proof_queue "
                    + "ORDER BY seq",
                []
            ) { row in
                PendingProof(
                    proofId: row.text(0) ?? "", tripId: row.text(1) ?? "",
                    kind: ProofKind(rawValue: row.text(2) ?? "") ?? .photo,
                    contentType: row.text(3) ?? "", size: Int(row.int(4)), location: row.isNull(5) ? nil : row.text(5),
                    acknowledged: Int(row.int(6)))
            }
        }
    }

    func proofBytes(_ proofId: String) throws -> [UInt8]? {
        try read { db in
            try db.query("SELECT bytes FROM proof_queue WHERE proof_id = ?1", [.text(proofId)]) { $0.blob(0) }.first
        }
    }

    func recordProgress(_ proofId: String, location: String?, acknowledged: Int) throws {
        try write { db in
            try db.run(
                "UPDATE proof_queue SET location = ?2, acknowledged = ?3 WHERE proof_id = ?1",
                [.text(proofId), location.map { .text($0) } ?? .null, .integer(Int64(acknowledged))])
        }
    }

    func removeProof(_ proofId: String) throws {
        try write { db in try db.run("DELETE FROM proof_queue WHERE proof_id = ?1", [.text(proofId)]) }
    }

    /// The proof id each pending change names, by change id.
    func stepProofs() throws -> [String: String] {
        let rows = try read { db in
            try db.query("SELECT change_id, proof_id FROM step_proofs", []) { ($0.text(0) ?? "", $0.text(1) ?? "") }
        }
        return Dictionary(rows, uniquingKeysWith: { _, last in last })
    }
}
