import Foundation
import Testing
import EnRouteDomain
import EnRouteModels
import EnRoutePostgres
import PostgresClient
import TestSupport

/// The invariants PostgreSQL itself enforces, through the whole backend where a request is the unit: one unfinished
/// ride per customer, one trip per idempotency key, version-checked moves, an append-only ledger, and a lost
/// connection answered 503 and reopened. Runs when ENROUTE_TEST_POSTGRES_URL names a server.
@Suite(.serialized, .timeLimit(.minutes(2))) struct PostgresInvariantTests {
    static var servers: [String] { PostgresTestServer.url.map { [$0] } ?? [] }
    static let pickup = #"{"lat":60.1699,"lng":24.9384}"#, dropoff = #"{"lat":60.1841,"lng":24.9497}"#

    /// A backend on a fresh schema of `url`.
    static func backend(_ url: String, _ schema: String) -> TestBackend {
        TestBackend(storage: .postgres(url: url, schema: schema))
    }

    @Test(arguments: servers) func fiftyConcurrentCreatesForOneCustomerLeaveOneActiveRide(_ url: String) async throws {
        let schema = PostgresTestServer.freshSchema("oneactive")
        defer { PostgresTestServer.drop(schema, url: url) }
        let backend = Self.backend(url, schema)
        let token = backend.token("c1", .customer)
        var bodies: [String] = []
        for _ in 0..<50 { bodies.append(try await backend.rideBody("c1", pickup: Self.pickup, dropoff: Self.dropoff)) }
        let statuses = await withTaskGroup(of: Int.self) { group in
            for body in bodies {
                group.addTask {
                    await backend.call(
                        "POST", "/v1/trips", token: token, json: body, headers: ["Idempotency-Key": UUID().uuidString]
                    ).status
                }
            }
            return await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(statuses.filter { $0 == 201 }.count == 1)
        #expect(
            statuses.allSatisfy { $0 == 201 || $0 == 409 },
            "every other create is refused as already active: \(statuses)")
        let stored = try backend.store.trips(.party(.customer, id: "c1"), after: nil, limit: 100).trips
        #expect(stored.count == 1 && stored.allSatisfy(\.status.isActive))
    }

    @Test(arguments: servers) func oneIdempotencyKeyFromManyConcurrentTransactionsCreatesOneTrip(
        _ url: String
    ) async throws {
        let schema = PostgresTestServer.freshSchema("onekey")
        defer { PostgresTestServer.drop(schema, url: url) }
        let backend = Self.backend(url, schema)
        let token = backend.token("c1", .customer)
        let body = try await backend.rideBody("c1", pickup: Self.pickup, dropoff: Self.dropoff)
        let key = UUID().uuidString
        let results = await withTaskGroup(of: (Int, String?).self) { group in
            for _ in 0..<50 {
                group.addTask {
                    let r = await backend.call(
                        "POST", "/v1/trips", token: token, json: body, headers: ["Idempotency-Key": key])
                    return (
                        r.status,
                        (try? JSONSerialization.jsonObject(with: Data(r.body)) as? [String: Any])?["id"] as? String
                    )
                }
            }
            return await group.reduce(into: [(Int, String?)]()) { $0.append($1) }
        }
        #expect(try backend.store.trips(.all(status: nil), after: nil, limit: 100).trips.count == 1)
        #expect(Set(results.compactMap(\.1)).count == 1)
        #expect(results.allSatisfy { $0.0 == 201 || $0.0 == 409 }, "\(results.map(\.0))")
    }

    @Test(arguments: servers) func aStaleVersionIsAConflictAndWritesNothing(_ url: String) async throws {
        let schema = PostgresTestServer.freshSchema("stale")
        defer { PostgresTestServer.drop(schema, url: url) }
        let store = try PostgresTripStore(url: url, schema: schema)
        try await store.transaction { tx in try await tx.insert(Rows.ride("T1")) }
        let moved = {
            var t = Rows.ride("T1", state: .driverAssigned); t.version = 2; return t
        }()
        try await store.transaction { tx in try await tx.update(moved, expectedVersion: 1) }
        // The version this writer read is gone.
        let stale = {
            var t = Rows.ride("T1", state: .cancelled); t.version = 2; return t
        }()
        await #expect(throws: TripStoreConflict.self) {
            try await store.transaction { tx in try await tx.update(stale, expectedVersion: 1) }
        }
        // A writer whose snapshot predates another's commit loses too, though the version it names is current.
        let aRead = AsyncStream<Void>.makeStream(), bDone = AsyncStream<Void>.makeStream()
        let a = Task {
            try await store.transaction { tx in
                var trip = try #require(try await tx.trip("T1"))
                aRead.continuation.yield()
                for await _ in bDone.stream { break }
                trip.problem = "from A"
                try await tx.update(trip, expectedVersion: 2)
            }
        }
        for await _ in aRead.stream { break }
        let fromB = {
            var t = moved; t.problem = "from B"; t.version = 3; return t
        }()
        try await store.transaction { tx in try await tx.update(fromB, expectedVersion: 2) }
        bDone.continuation.yield()
        await #expect(throws: TripStoreConflict.self) { try await a.value }
        #expect(try store.trip(id: "T1")?.problem == "from B")
    }

    @Test(arguments: servers) func theLedgerRefusesUpdateAndDelete(_ url: String) async throws {
        let schema = PostgresTestServer.freshSchema("ledger")
        defer { PostgresTestServer.drop(schema, url: url) }
        let store = try PostgresTripStore(url: url, schema: schema)
        let at = Rows.t0
        try await store.transaction { tx in
            try await tx.post([
                LedgerEntry(
                    movementId: "mv1", kind: "hold", tripId: "T1", account: "customer:c1:card", amountMinor: -500,
                    currency: "EUR", at: at),
                LedgerEntry(
                    movementId: "mv1", kind: "hold", tripId: "T1", account: "customer:c1:hold", amountMinor: 500,
                    currency: "EUR", at: at),
            ])
        }
        let raw = try PostgresConnection(url: url, searchPath: schema)
        for statement in ["UPDATE ledger SET amount_minor = 0", "DELETE FROM ledger", "TRUNCATE ledger"] {
            #expect(throws: PostgresError.self, "\(statement)") { try raw.execute(statement) }
        }
        #expect(try store.ledger(tripId: "T1").map(\.amountMinor) == [-500, 500])
        #expect(try await store.ledgerBalance(account: "customer:c1:hold") == 500)
    }

    @Test(arguments: servers) func aKilledConnectionAnswers503AndTheNextRequestReconnects(_ url: String) async throws {
        let schema = PostgresTestServer.freshSchema("killed")
        defer { PostgresTestServer.drop(schema, url: url) }
        let backend = Self.backend(url, schema)
        let token = backend.token("c1", .customer)
        let first = await backend.call(
            "POST", "/v1/trips", token: token,
            json: try await backend.rideBody("c1", pickup: Self.pickup, dropoff: Self.dropoff),
            headers: ["Idempotency-Key": UUID().uuidString])
        #expect(first.status == 201, "\(String(decoding: first.body, as: UTF8.self))")
        // Every connection of this backend's schema is ended by the server, as an administrator or a failover would.
        let admin = try PostgresConnection(url: url)
        let killed = try admin.query(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1",
            [.text("enroute:" + schema)])
        #expect(!killed.isEmpty)
        let cut = await backend.call("GET", "/v1/trips?limit=5", token: token)
        #expect(cut.status == 503, "\(String(decoding: cut.body, as: UTF8.self))")
        #expect(cut.headers["Content-Type"] == "application/problem+json")
        #expect(cut.headers["Retry-After"] == "1")
        let after = await backend.call("GET", "/v1/trips?limit=5", token: token)
        #expect(after.status == 200, "the next request opens a new connection")
    }
}
