import Foundation
import Testing
import EnRouteDomain
import EnRouteModels
import EnRouteStorage

/// The calls-and-proof adapters on real files: blobs on disk, upload state, relay sessions and phone numbers on SQLite.
@Suite struct ContactStorageTests {
    @Test func aDiskBlobAppendDropsWhatACrashLeftPastTheOffset() async throws {
        let db = try TemporaryDatabase("blobs")
        defer { db.remove() }
        let blobs = try DiskBlobStore(directory: db.folder.appendingPathComponent("blobs"))
        try await blobs.create("u1")
        #expect(try await blobs.append("u1", at: 0, [1, 2, 3, 4]) == 4)
        // Bytes 3 and 4 reached the disk but their offset never reached the database: the append at 2 replaces them.
        #expect(try await blobs.append("u1", at: 2, [9]) == 3)
        #expect(try await blobs.read("u1") == [1, 2, 9])
        await #expect(throws: BlobStoreError.gap(id: "u1", length: 3, offset: 5)) { try await blobs.append("u1", at: 5, [0]) }
        let reopened = try DiskBlobStore(directory: db.folder.appendingPathComponent("blobs"))
        #expect(try await reopened.read("u1") == [1, 2, 9])
        try await reopened.delete("u1")
        await #expect(throws: BlobStoreError.missing("u1")) { try await reopened.append("u1", at: 0, [1]) }
    }

    @Test func uploadStateAndTheTripsProofSurviveAReopen() async throws {
        let db = try TemporaryDatabase("uploads")
        defer { db.remove() }
        let upload = ProofUpload(id: "u1", tripId: "T1", providerId: "p1", kind: .signature, contentType: "image/svg+xml", length: 10, offset: 4,
                                 createdAt: Rows.t0)
        do {
            let store = try SQLiteProofUploadStore(tripStore: try SQLiteTripStore(path: db.path))
            try await store.save(upload)
            try await store.link(tripId: "T1", proofId: "u1")
        }
        let store = try SQLiteProofUploadStore(tripStore: try SQLiteTripStore(path: db.path))
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

    @Test func onlyOpenSessionsAreOpenAndTheNewestIsTheTrips() async throws {
        let db = try TemporaryDatabase("sessions")
        defer { db.remove() }
        let store = try SQLiteContactSessionStore(tripStore: try SQLiteTripStore(path: db.path))
        var old = ContactSession(relaySessionId: "S1", tripId: "T1", customerId: "c1", providerId: "p1", customerDials: "+3587000001",
                                 providerDials: "+3587000001", openedAt: Rows.t0)
        try await store.save(old)
        old.closedAt = Rows.t0.addingTimeInterval(60)
        try await store.save(old)
        let new = ContactSession(relaySessionId: "S2", tripId: "T1", customerId: "c1", providerId: "p2", customerDials: "+3587000002",
                                 providerDials: "+3587000001", openedAt: Rows.t0.addingTimeInterval(61))
        try await store.save(new)
        #expect(try await store.openSession(tripId: "T1") == new)
        #expect(try await store.openSessions() == [new])
    }

    @Test func phoneNumbersAreKeptPerAccountAndRoleAcrossAReopen() async throws {
        let db = try TemporaryDatabase("phones")
        defer { db.remove() }
        do {
            let directory = try SQLiteDirectory(path: db.path)
            try await directory.setPhoneNumber(E164PhoneNumber("+358401111111")!, for: Account(id: "a1", role: .customer))
            try await directory.setPhoneNumber(E164PhoneNumber("+358502222222")!, for: Account(id: "a1", role: .provider))
            try await directory.setPhoneNumber(E164PhoneNumber("+358403333333")!, for: Account(id: "a1", role: .customer))
        }
        let directory = try SQLiteDirectory(path: db.path)
        #expect(directory.phoneNumber(of: Account(id: "a1", role: .customer))?.e164 == "+358403333333")
        #expect(directory.phoneNumber(of: Account(id: "a1", role: .provider))?.e164 == "+358502222222")
        #expect(directory.phoneNumber(of: Account(id: "a2", role: .customer)) == nil)
    }
}
