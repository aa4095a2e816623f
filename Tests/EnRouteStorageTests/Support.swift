import Foundation
import EnRouteDomain
import EnRouteModels
import Testing
import EnRouteSQLite
import EnRoutePostgres

/// A fresh folder in the temporary directory holding one database file; `remove()` deletes it with its WAL files.
struct TemporaryDatabase {
    let folder: URL
    let path: String

    init(_ prefix: String = "storage") throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("enroute-\(prefix)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        path = folder.appendingPathComponent("db.sqlite").path
    }

    func remove() { try? FileManager.default.removeItem(at: folder) }
}

/// Runs `body` again while it loses to a concurrent transaction (`TripStoreConflict`), as `TripService` does.
func retryingConflicts<T>(_ body: () async throws -> T) async throws -> T {
    for _ in 0..<100 {
        do { return try await body() } catch is TripStoreConflict { continue }
    }
    return try await body()
}

/// Closed until opened; every waiter then goes on.
actor Gate {
    private var isOpen = false
    private var waiters: [CheckedContinuation<Void, Never>] = []
    func open() { isOpen = true; waiters.forEach { $0.resume() }; waiters = [] }
    func wait() async {
        if isOpen { return }
        await withCheckedContinuation { waiters.append($0) }
    }
}

/// An error a transaction body throws to make it roll back.
struct Abort: Error {}

/// Records of trips and the other rows the stores keep, at fixed times.
enum Rows {
    static let t0 = Date(timeIntervalSince1970: 1_792_520_000)
    static let pickup = Coordinate(lat: 60.1699, lng: 24.9384)
    static let dropoff = Coordinate(lat: 60.1841, lng: 24.9497)

    static func ride(
        _ id: String, customer: String = "c1", state: TripState = .searching, at offset: TimeInterval = 0
    ) -> TripRecord {
        var trip = TripRecord(
            id: id, kind: .ride, status: .ride(state), customerId: customer, pickup: pickup, dropoff: dropoff,
            createdAt: t0.addingTimeInterval(offset))
        trip.productID = "economy"
        return trip
    }

    static func order(
        _ id: String, merchant: String = "m1", status: DeliveryStatus = .placed, customer: String = "c1",
        at offset: TimeInterval = 0
    ) -> TripRecord {
        var trip = TripRecord(
            id: id, kind: .delivery, status: .delivery(status), customerId: customer, pickup: pickup, dropoff: dropoff,
            createdAt: t0.addingTimeInterval(offset))
        trip.merchantId = merchant
        trip.items = [OrderItem(sku: "coffee", quantity: 1)]
        trip.merchantStep = .pending
        return trip
    }

    static func change(
        _ tripId: String, version: Int, status: String = "searching", changeId: String? = nil,
        at offset: TimeInterval = 0
    ) -> ChangeLogEntry {
        ChangeLogEntry(
            tripId: tripId, version: version, status: status, actorRole: changeId == nil ? .backend : .provider,
            actorId: changeId == nil ? "backend" : "p1", serverTime: t0.addingTimeInterval(offset),
            deviceTime: changeId == nil ? nil : t0.addingTimeInterval(offset - 1), changeId: changeId)
    }

    static func scope(_ key: String, account: String = "c1") -> IdempotencyScope {
        IdempotencyScope(accountId: account, method: "POST", path: "/v1/trips", key: key)
    }

    static func key(_ key: String, answered: Bool, at offset: TimeInterval = 0) -> IdempotencyRecord {
        IdempotencyRecord(
            scope: scope(key), fingerprint: "fp-\(key)",
            response: answered
                ? StoredResponse(status: 201, contentType: "application/json", body: Array(#"{"id":"T1"}"#.utf8)) : nil,
            createdAt: t0.addingTimeInterval(offset))
    }

    static func message(
        _ id: String, topic: String = "apns", at offset: TimeInterval = 0, notBefore: TimeInterval? = nil
    ) -> OutboxMessage {
        OutboxMessage(
            id: id, topic: topic, payload: Array("payload-\(id)".utf8), createdAt: t0.addingTimeInterval(offset),
            notBefore: notBefore.map { t0.addingTimeInterval($0) })
    }
}

/// Which database a repository test runs on: a temporary SQLite file always, and PostgreSQL (a fresh schema per test)
/// when `ENROUTE_TEST_POSTGRES_URL` names a server.
enum StoreBacking: Sendable, CustomTestStringConvertible {
    case sqlite
    case postgres(url: String)

    /// SQLite, and PostgreSQL when it is configured.
    static var all: [StoreBacking] {
        [.sqlite] + (PostgresTestServer.url.map { [.postgres(url: $0)] } ?? [])
    }

    var testDescription: String {
        switch self {
        case .sqlite: "SQLite"
        case .postgres: "PostgreSQL"
        }
    }

    /// A fresh, empty database of this kind.
    func database(_ prefix: String = "storage") throws -> TestDatabase {
        switch self {
        case .sqlite: .sqlite(try TemporaryDatabase(prefix))
        case .postgres(let url): .postgres(url: url, schema: PostgresTestServer.freshSchema(prefix))
        }
    }
}

/// One test's database: a temporary file or a PostgreSQL schema, opened as often as a test "restarts".
enum TestDatabase {
    case sqlite(TemporaryDatabase)
    case postgres(url: String, schema: String)

    /// The trip store over this database (a new connection each call, as a restart would open).
    func tripStore() throws -> any TripStore {
        switch self {
        case .sqlite(let db): try SQLiteTripStore(path: db.path)
        case .postgres(let url, let schema): try PostgresTripStore(url: url, schema: schema)
        }
    }

    /// The trip store and the path store beside it.
    func pathStores() throws -> (any TripStore, any PathStore) {
        switch self {
        case .sqlite(let db):
            let trips = try SQLiteTripStore(path: db.path)
            return (trips, try SQLitePathStore(tripStore: trips))
        case .postgres(let url, let schema):
            let trips = try PostgresTripStore(url: url, schema: schema)
            return (trips, PostgresPathStore(tripStore: trips))
        }
    }

    /// Deletes the file or drops the schema.
    func remove() {
        switch self {
        case .sqlite(let db): db.remove()
        case .postgres(let url, let schema): PostgresTestServer.drop(schema, url: url)
        }
    }
}
