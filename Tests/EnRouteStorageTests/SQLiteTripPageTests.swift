import Foundation
import Testing
import EnRouteDomain
import EnRouteSQLite

/// The SQLite trip store answers every list page from an index range, in index order, against a real file.
@Suite struct SQLiteTripPageTests {
    static let queries: [(TripQuery, String)] = [
        (.all(status: nil), "trips_newest"),
        (.all(status: "placed"), "trips_status_newest"),
        (.merchantActive(merchantId: "m1"), "trips_merchant_active"),
    ]

    @Test(arguments: queries, [nil, TripCursor(createdAt: 1_792_000_000.5, id: "T9")])
    func everyListPageIsReadThroughItsIndexWithoutAScanOrASort(
        _ query: (TripQuery, index: String), _ cursor: TripCursor?
    ) throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("enroute-plan-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let store = try SQLiteTripStore(path: dir.appendingPathComponent("db.sqlite").path)

        let plan = try store.queryPlan(query.0, after: cursor, limit: 50)
        #expect(plan.count == 1, "\(plan)")
        let step = try #require(plan.first)
        #expect(
            step.contains("USING INDEX \(query.index)") || step.contains("USING COVERING INDEX \(query.index)"),
            "\(plan)")
        // A filtered page or a page after a cursor is a range of the index (SEARCH); only the unfiltered
        // first page walks the index from its newest end, stopping at the limit.
        if cursor != nil || query.0 != .all(status: nil) { #expect(step.hasPrefix("SEARCH trips"), "\(plan)") }
        #expect(!plan.contains { $0.contains("TEMP B-TREE") }, "\(plan)")
    }

    @Test func dueOutboxMessagesAreReadOldestFirstAlongAnIndexWithoutSortingTheBacklog() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("enroute-plan-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let store = try SQLiteTripStore(path: dir.appendingPathComponent("db.sqlite").path)
        let plan = try store.dueOutboxPlan()
        #expect(plan.count == 1 && plan[0].contains("INDEX outbox_oldest"), "\(plan)")
        #expect(!plan.contains { $0.contains("TEMP B-TREE") }, "\(plan)")
    }

    @Test func reopeningAStoreDoesNotRunTheListIndexMigrationAgain() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("enroute-plan-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("db.sqlite").path
        _ = try SQLiteTripStore(path: path)
        // Opening again applies nothing twice (the migration drops indexes, which would fail a second time).
        #expect(
            try SQLiteTripStore(path: path).trips(.merchantActive(merchantId: "m1"), after: nil, limit: 1).trips.isEmpty
        )
    }
}
