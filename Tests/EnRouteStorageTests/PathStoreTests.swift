import Foundation
import Testing
import EnRouteDomain
import SQLiteClient
import EnRouteSQLite

/// Every path store (SQLite, and PostgreSQL when configured) against a real database: each trip's path once and in
/// order, concurrent appends all committed beside trip transactions, and the path surviving a restart.
@Suite(.timeLimit(.minutes(1))) struct PathStoreTests {
    /// A trip store in a fresh temporary folder, which the caller removes.
    static func tripDatabase() throws -> (SQLiteTripStore, URL) {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("paths-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return (try SQLiteTripStore(path: dir.appendingPathComponent("db.sqlite").path), dir)
    }

    @Test(arguments: StoreBacking.all) func thePathStoreKeepsEachTripsPathOnceAndInOrder(
        _ backing: StoreBacking
    ) async throws {
        let db = try backing.database("paths")
        defer { db.remove() }
        let (_, paths) = try db.pathStores()
        let store = paths
        let start = Date(timeIntervalSince1970: 1_792_520_000)
        func point(_ trip: String, _ i: Int) -> PathPoint {
            PathPoint(
                tripId: trip, providerId: "p1", lat: 60 + Double(i) * 1e-4, lng: 24.9, heading: 10, speed: 7,
                accuracy: 5,
                recordedAt: start.addingTimeInterval(Double(i)), receivedAt: start.addingTimeInterval(Double(i) + 0.5))
        }
        // Concurrent appends share commits; every caller returns after its points are stored.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for batch in 0..<20 {
                group.addTask {
                    try await store.append((0..<5).map { point("T\(batch % 2)", batch * 5 + $0) }.reversed())
                }
            }
            try await group.waitForAll()
        }
        try await store.append([point("T0", 0), point("T0", 10)])  // already stored: ignored
        let t0 = try await store.path(tripId: "T0")
        #expect(t0.count == 50)
        #expect(t0.map(\.recordedAt) == t0.map(\.recordedAt).sorted())
        #expect(t0.first == point("T0", 0))
        // The path survives reopening the database.
        let (_, reopened) = try db.pathStores()
        #expect(try await reopened.path(tripId: "T1").count == 50)
    }

    @Test(arguments: StoreBacking.all) func manyAppendsAtOnceAreAllCommittedAcrossSeveralTurnsOfTheSharedWriter(
        _ backing: StoreBacking
    ) async throws {
        let db = try backing.database("paths")
        defer { db.remove() }
        let (trips, paths) = try db.pathStores()
        let start = Date(timeIntervalSince1970: 1_792_520_000)
        // 40 appends of 100 rows: more than a turn's worth, so the writer goes round several times,
        // and trip transactions queued meanwhile run between the turns.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for batch in 0..<40 {
                group.addTask {
                    try await paths.append(
                        (0..<100).map { i in
                            PathPoint(
                                tripId: "T\(batch % 4)", providerId: "p1", lat: 60, lng: 24.9, heading: 0, speed: 7,
                                accuracy: 5,
                                recordedAt: start.addingTimeInterval(Double(batch * 100 + i)), receivedAt: start)
                        })
                }
                if batch % 10 == 0 {
                    group.addTask { _ = try await trips.transaction { tx in try await tx.trip("none") } }
                }
            }
            try await group.waitForAll()
        }
        for trip in 0..<4 { #expect(try await paths.path(tripId: "T\(trip)").count == 1_000) }
    }

    @Test(arguments: StoreBacking.all) func aTripWithoutPointsHasAnEmptyPathAndAnEmptyAppendWritesNothing(
        _ backing: StoreBacking
    ) async throws {
        let db = try backing.database("paths")
        defer { db.remove() }
        let (_, paths) = try db.pathStores()
        try await paths.append([])
        #expect(try await paths.path(tripId: "T1").isEmpty)
    }

    @Test(arguments: StoreBacking.all) func aPointIsKeptWithEveryFieldAndTheSameDeviceTimeTwiceIsKeptOnce(
        _ backing: StoreBacking
    ) async throws {
        let db = try backing.database("paths")
        defer { db.remove() }
        let (_, paths) = try db.pathStores()
        let at = Date(timeIntervalSince1970: 1_792_520_000)
        let point = PathPoint(
            tripId: "T1", providerId: "p7", lat: 60.17, lng: 24.94, heading: 271.5, speed: 8.25, accuracy: 4.5,
            recordedAt: at, receivedAt: at.addingTimeInterval(2))
        let again = PathPoint(
            tripId: "T1", providerId: "p7", lat: 61, lng: 25, heading: 0, speed: 0, accuracy: 50,
            recordedAt: at, receivedAt: at.addingTimeInterval(9))
        try await paths.append([point])
        try await paths.append([again])
        #expect(try await paths.path(tripId: "T1") == [point], "the first write of a device time wins")
    }

    @Test func pathsOnAFileWithoutTheTripSchemaCannotOpen() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("paths-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        #expect(throws: SQLiteError.self) { try SQLitePathStore(path: dir.appendingPathComponent("empty.sqlite").path) }
    }
}
