import Foundation
import EnRouteModels
import SQLiteClient

extension ProviderStore {
    /// `reportStep`'s transaction: the change joins the outbox and the trip's screen moves on, together.
    func enqueue(_ change: StepChange, trip: TripSnapshot) throws -> LocalTrip {
        let snapshot = try Self.encode(trip)
        return try write { db in
            try db.run(
                "INSERT OR IGNORE INTO local_trips (trip_id, version, snapshot) VALUES (?1, ?2, ?3)",
                [.text(trip.id), .integer(Int64(trip.version)), .blob(snapshot)])
            try db.run(
                """
                INSERT INTO step_outbox (change_id, trip_id, step, device_time, lat, lng) VALUES (?1, ?2, \
                ?3, ?4, ?5, ?6)
                """,
                [
                    .text(change.changeId), .text(change.tripId), .text(change.step.rawValue),
                    change.deviceTime.storedValue,
                    change.position.map { .real($0.lat) } ?? .null, change.position.map { .real($0.lng) } ?? .null,
                ])
            if let proofId = change.proofId {
                try db.run(
                    "INSERT INTO step_proofs (change_id, proof_id) VALUES (?1, ?2)",
                    [.text(change.changeId), .text(proofId)])
            }
            return try Self.localTrip(change.tripId, db)!
        }
    }

    /// Every unanswered change, oldest first.
    func pendingChanges() throws -> [StepChange] {
        let proofs = try stepProofs()
        return try read { db in
            try db.query("SELECT change_id, trip_id, step, device_time, lat, lng FROM step_outbox ORDER BY seq", []) {
                row in
                StepChange(
                    changeId: row.text(0) ?? "", tripId: row.text(1) ?? "",
                    step: ProviderStep(rawValue: row.text(2) ?? "") ?? .cancelled,
                    deviceTime: Date(stored: row.double(3)),
                    position: row.isNull(4) ? nil : Coordinate(lat: row.double(4), lng: row.double(5)),
                    proofId: proofs[row.text(0) ?? ""])
            }
        }
    }

    /// `onStepResult` Applied: the change leaves the outbox and the server's trip is kept, together.
    func complete(_ changeId: String, trip: TripSnapshot) throws -> LocalTrip {
        let snapshot = try Self.encode(trip)
        return try write { db in
            try db.run("DELETE FROM step_outbox WHERE change_id = ?1", [.text(changeId)])
            try db.run("DELETE FROM step_proofs WHERE change_id NOT IN (SELECT change_id FROM step_outbox)", [])
            try Self.save(trip, snapshot, db)
            return try Self.localTrip(trip.id, db)!
        }
    }

    /// `onStepResult` Rejected: the change and every later one for the trip leave the outbox, and the real trip
    /// replaces the local copy. Returns the trip and the later changes discarded with it.
    func reject(_ changeId: String, trip: TripSnapshot) throws -> (LocalTrip, discarded: [StepChange]) {
        let snapshot = try Self.encode(trip)
        let pending = try pendingChanges().filter { $0.tripId == trip.id }
        let later = pending.drop { $0.changeId != changeId }.dropFirst()
        return try write { db in
            try db.run(
                "DELETE FROM step_outbox WHERE trip_id = ?1 AND seq >= (SELECT seq FROM step_outbox WHERE "
                    + "change_id = ?2)",
                [.text(trip.id), .text(changeId)])
            try db.run("DELETE FROM step_outbox WHERE change_id = ?1", [.text(changeId)])
            try db.run("DELETE FROM step_proofs WHERE change_id NOT IN (SELECT change_id FROM step_outbox)", [])
            try Self.save(trip, snapshot, db)
            return (try Self.localTrip(trip.id, db)!, Array(later))
        }
    }

    /// Drops a change the server will never take (for example a trip it no longer knows), with the trip's later
    /// changes.
    func discard(_ changeId: String, tripId: String) throws -> [StepChange] {
        let pending = try pendingChanges().filter { $0.tripId == tripId }
        let dropped = Array(pending.drop { $0.changeId != changeId })
        try write { db in
            for change in dropped {
                try db.run("DELETE FROM step_outbox WHERE change_id = ?1", [.text(change.changeId)])
            }
        }
        return dropped
    }

    /// Keeps a trip the server sent (event, active list), unless the stored copy is newer.
    func saveServerTrip(_ trip: TripSnapshot) throws -> LocalTrip {
        let snapshot = try Self.encode(trip)
        return try write { db in
            try Self.save(trip, snapshot, db)
            return try Self.localTrip(trip.id, db)!
        }
    }

    /// The local copy of one trip.
    func localTrip(_ id: String) throws -> LocalTrip? {
        try read { db in try Self.localTrip(id, db) }
    }

    /// Every local trip, unfinished first, then by id.
    func localTrips() throws -> [LocalTrip] {
        let ids = try read { db in
            try db.query("SELECT trip_id FROM local_trips ORDER BY trip_id", []) { $0.text(0) ?? "" }
        }
        return try ids.compactMap { try localTrip($0) }
            .sorted {
                (ProviderStep.isFinished($0.displayedStatus) ? 1 : 0, $0.id) < (
                    ProviderStep.isFinished($1.displayedStatus) ? 1 : 0, $1.id
                )
            }
    }

    /// Forgets finished trips that have nothing left to send.
    func forgetFinishedTrips() throws {
        for trip in try localTrips() where ProviderStep.isFinished(trip.server.status) && trip.pendingSteps == 0 {
            try write { db in try db.run("DELETE FROM local_trips WHERE trip_id = ?1", [.text(trip.id)]) }
        }
    }

    private static func save(_ trip: TripSnapshot, _ snapshot: [UInt8], _ db: SQLiteDatabase) throws {
        try db.run(
            """
            INSERT INTO local_trips (trip_id, version, snapshot) VALUES (?1, ?2, ?3)
            ON CONFLICT (trip_id) DO UPDATE SET version = excluded.version, snapshot = excluded.snapshot
            WHERE excluded.version >= local_trips.version
            """, [.text(trip.id), .integer(Int64(trip.version)), .blob(snapshot)])
    }

    /// The trip with its displayed status: the newest unsent step's, else the server's.
    private static func localTrip(_ id: String, _ db: SQLiteDatabase) throws -> LocalTrip? {
        guard
            let blob = try db.query("SELECT snapshot FROM local_trips WHERE trip_id = ?1", [.text(id)], { $0.blob(0) })
                .first
        else { return nil }
        let server = try WireCoding.decoder().decode(TripSnapshot.self, from: Data(blob))
        let steps = try db.query("SELECT step FROM step_outbox WHERE trip_id = ?1 ORDER BY seq", [.text(id)]) {
            $0.text(0) ?? ""
        }
        let displayed = steps.last.flatMap(ProviderStep.init(rawValue:))?.resultingStatus
        return LocalTrip(server: server, displayedStatus: displayed, pendingSteps: steps.count)
    }

    private static func encode(_ trip: TripSnapshot) throws -> [UInt8] {
        Array(try WireCoding.encoder().encode(trip))
    }
}
