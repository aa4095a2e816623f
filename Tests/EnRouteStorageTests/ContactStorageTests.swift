import Foundation
import Testing
import EnRouteDomain
import EnRouteModels
import EnRouteSQLite
import EnRouteStores
import EnRoutePostgres
import SQLiteClient
import PostgresClient

/// The calls-and-proof adapters on real files and databases: blobs on disk; upload state, relay sessions and phone
/// numbers on SQLite, and on PostgreSQL when configured.
@Suite struct ContactStorageTests {
    static func uploads(_ db: TestDatabase) throws -> any ProofUploadStore {
        switch db {
        case .sqlite(let file): try SQLiteProofUploadStore(tripStore: SQLiteTripStore(path: file.path))
        case .postgres(let url, let schema):
            try PostgresProofUploadStore(tripStore: PostgresTripStore(url: url, schema: schema))
        }
    }

    /// A trip's proof as releases before the step kept it on the trip wrote it: a row of its own.
    static func linkAsBefore(_ db: TestDatabase, tripId: String, proofId: String) throws {
        let sql = "INSERT INTO trip_proofs (trip_id, proof_id) VALUES "
        switch db {
        case .sqlite(let file):
            try SQLiteDatabase(path: file.path).run(sql + "(?1, ?2)", [.text(tripId), .text(proofId)])
        case .postgres(let url, let schema):
            let connection = try PostgresConnection(url: url, searchPath: schema)
            _ = try connection.run(sql + "($1, $2)", [.text(tripId), .text(proofId)])
        }
    }

    static func sessions(_ db: TestDatabase) throws -> any ContactSessionStore {
        switch db {
        case .sqlite(let file): try SQLiteContactSessionStore(tripStore: SQLiteTripStore(path: file.path))
        case .postgres(let url, let schema):
            try PostgresContactSessionStore(tripStore: PostgresTripStore(url: url, schema: schema))
        }
    }

    static func phoneBook(_ db: TestDatabase) throws -> any PhoneBook {
        switch db {
        case .sqlite(let file): try SQLiteDirectory(path: file.path)
        case .postgres(let url, let schema):
            try PostgresDirectory(tripStore: PostgresTripStore(url: url, schema: schema))
        }
    }
    @Test func aDiskBlobAppendDropsWhatACrashLeftPastTheOffset() async throws {
        let db = try TemporaryDatabase("blobs")
        defer { db.remove() }
        let blobs = try DiskBlobStore(directory: db.folder.appendingPathComponent("blobs"))
        try await blobs.create("u1")
        #expect(try await blobs.append("u1", at: 0, [1, 2, 3, 4]) == 4)
        // Bytes 3 and 4 reached the disk but their offset never reached the database: the append at 2 replaces them.
        #expect(try await blobs.append("u1", at: 2, [9]) == 3)
        #expect(try await blobs.read("u1") == [1, 2, 9])
        await #expect(throws: BlobStoreError.gap(id: "u1", length: 3, offset: 5)) {
            try await blobs.append("u1", at: 5, [0])
        }
        let reopened = try DiskBlobStore(directory: db.folder.appendingPathComponent("blobs"))
        #expect(try await reopened.read("u1") == [1, 2, 9])
        try await reopened.delete("u1")
        await #expect(throws: BlobStoreError.missing("u1")) { try await reopened.append("u1", at: 0, [1]) }
    }

    @Test(arguments: StoreBacking.all) func uploadStateAndTheTripsProofSurviveAReopen(
        _ backing: StoreBacking
    ) async throws {
        let db = try backing.database("uploads")
        defer { db.remove() }
        let upload = ProofUpload(
            id: "u1", tripId: "T1", providerId: "p1", kind: .signature, contentType: "image/svg+xml", length: 10,
            offset: 4,
            createdAt: Rows.t0)
        do {
            let store = try Self.uploads(db)
            try await store.save(upload)
            try Self.linkAsBefore(db, tripId: "T1", proofId: "u1")
        }
        let store = try Self.uploads(db)
        #expect(try await store.upload(id: "u1") == upload)
        #expect(try await store.proofId(tripId: "T1") == "u1")
        #expect(try await store.incomplete(createdBefore: Rows.t0.addingTimeInterval(1)).map(\.id) == ["u1"])
        #expect(try await store.incomplete(createdBefore: Rows.t0).isEmpty)
        var complete = upload
        complete.offset = 10; complete.completedAt = Rows.t0.addingTimeInterval(5)
        try await store.save(complete)
        #expect(try await store.incomplete(createdBefore: Rows.t0.addingTimeInterval(60)).isEmpty)
        try await store.delete(id: "u1")
        #expect(try await store.upload(id: "u1") == nil)
    }

    @Test(arguments: StoreBacking.all) func onlyOpenSessionsAreOpenAndTheNewestIsTheTrips(
        _ backing: StoreBacking
    ) async throws {
        let db = try backing.database("sessions")
        defer { db.remove() }
        let store = try Self.sessions(db)
        var old = ContactSession(
            relaySessionId: "S1", tripId: "T1", customerId: "c1", providerId: "p1", customerDials: "+3587000001",
            providerDials: "+3587000001", openedAt: Rows.t0)
        try await store.save(old)
        old.closedAt = Rows.t0.addingTimeInterval(60)
        try await store.save(old)
        let new = ContactSession(
            relaySessionId: "S2", tripId: "T1", customerId: "c1", providerId: "p2", customerDials: "+3587000002",
            providerDials: "+3587000001", openedAt: Rows.t0.addingTimeInterval(61))
        try await store.save(new)
        #expect(try await store.openSession(tripId: "T1") == new)
        #expect(try await store.openSessions() == [new])
    }

    @Test(arguments: StoreBacking.all) func phoneNumbersAreKeptPerAccountAndRoleAcrossAReopen(
        _ backing: StoreBacking
    ) async throws {
        let db = try backing.database("phones")
        defer { db.remove() }
        do {
            let directory = try Self.phoneBook(db)
            try await directory.setPhoneNumber(
                E164PhoneNumber("+358401111111")!, for: Account(id: "a1", role: .customer))
            try await directory.setPhoneNumber(
                E164PhoneNumber("+358502222222")!, for: Account(id: "a1", role: .provider))
            try await directory.setPhoneNumber(
                E164PhoneNumber("+358403333333")!, for: Account(id: "a1", role: .customer))
        }
        let directory = try Self.phoneBook(db)
        #expect(directory.phoneNumber(of: Account(id: "a1", role: .customer))?.e164 == "+358403333333")
        #expect(directory.phoneNumber(of: Account(id: "a1", role: .provider))?.e164 == "+358502222222")
        #expect(directory.phoneNumber(of: Account(id: "a2", role: .customer)) == nil)
    }
}
