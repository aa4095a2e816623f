import Foundation
import Testing
import EnRouteModels
import EnRouteDomain
import EnRouteAPI
import EnRouteSQLite
import TestSupport

/// The list endpoints read the store one index page at a time, from a cursor, and never filter in memory.
@Suite struct ListPagingTests {
    enum StoreKind: String, CaseIterable, Sendable { case memory, sqlite }

    /// A backend over a fresh store of `kind`; the directory (if any) is removed by the caller.
    static func makeSUT(_ kind: StoreKind) throws -> (TestBackend, URL?) {
        switch kind {
        case .memory: return (TestBackend(), nil)
        case .sqlite:
            let dir = FileManager.default.temporaryDirectory.appendingPathComponent(
                "enroute-lists-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            return (TestBackend(storage: .sqlite(path: dir.appendingPathComponent("db.sqlite").path)), dir)
        }
    }

    static let epoch = Date(timeIntervalSince1970: 1_792_000_000)

    /// A delivery of `merchant` in `status`, created `seconds` after the epoch.
    static func order(
        _ id: String, merchant: String = "m1", _ status: DeliveryStatus = .placed, at seconds: Double
    ) -> TripRecord {
        var trip = TripRecord(
            id: id, kind: .delivery, status: .delivery(status), customerId: "c-\(id)",
            pickup: Coordinate(lat: 60.1689, lng: 24.9316), dropoff: Coordinate(lat: 60.1719, lng: 24.9414),
            createdAt: epoch.addingTimeInterval(seconds))
        trip.merchantId = merchant
        return trip
    }

    /// A ride in `state`, created `seconds` after the epoch.
    static func ride(_ id: String, _ state: TripState = .searching, at seconds: Double) -> TripRecord {
        TripRecord(
            id: id, kind: .ride, status: .ride(state), customerId: "c-\(id)",
            pickup: Coordinate(lat: 60.1699, lng: 24.9384), dropoff: Coordinate(lat: 60.1841, lng: 24.9497),
            createdAt: epoch.addingTimeInterval(seconds))
    }

    static func insert(_ trips: [TripRecord], into store: any TripStore) async throws {
        try await store.transaction { tx in for trip in trips { try await tx.insert(trip) } }
    }

    static func list(
        _ backend: TestBackend, _ path: String, as account: String, _ role: Party
    ) async throws -> TripSnapshotList {
        let r = await backend.call("GET", path, token: backend.token(account, role))
        guard r.status == 200 else {
            throw Failure("GET \(path): \(r.status) \(String(decoding: r.body, as: UTF8.self))")
        }
        return try WireCoding.decoder().decode(TripSnapshotList.self, from: Data(r.body))
    }

    /// Every page of `path` (which has no query yet, or ends in one), following `nextCursor`; `between` runs before
    /// each next page.
    static func allPages(
        _ backend: TestBackend, _ path: String, as account: String, _ role: Party,
        between: (Int) async throws -> Void = { _ in }
    ) async throws -> [[String]] {
        var pages: [[String]] = []
        var cursor: String?
        repeat {
            let separator = path.contains("?") ? "&" : "?"
            let page = try await list(
                backend, path + (cursor.map { "\(separator)cursor=\($0)" } ?? ""), as: account, role)
            pages.append(page.trips.map(\.id))
            cursor = page.nextCursor
            if cursor != nil { try await between(pages.count) }
            guard pages.count < 100 else { throw Failure("no last page") }
        } while cursor != nil
        return pages
    }

    @Test(arguments: StoreKind.allCases)
    func anActiveOrderOlderThanFiveHundredNewerTripsStillShowsInTheMerchantsList(_ kind: StoreKind) async throws {
        let (backend, dir) = try Self.makeSUT(kind)
        defer { dir.map { try? FileManager.default.removeItem(at: $0) } }
        var trips = [Self.order("OLD", at: 0), Self.order("OTHER", merchant: "m2", at: 1)]
        for i in 0..<250 { trips.append(Self.order("DONE\(i)", .delivered, at: 10 + Double(i))) }
        for i in 0..<250 { trips.append(Self.ride("R\(i)", at: 300 + Double(i))) }
        try await Self.insert(trips, into: backend.store)

        let page = try await Self.list(backend, "/v1/merchant/orders", as: "m1", .merchant)
        #expect(page.trips.map(\.id) == ["OLD"])
        #expect(page.nextCursor == nil)
    }

    @Test(arguments: StoreKind.allCases)
    func pagesHoldEveryTripExactlyOnceNewestFirstWhileNewTripsArrive(_ kind: StoreKind) async throws {
        let (backend, dir) = try Self.makeSUT(kind)
        defer { dir.map { try? FileManager.default.removeItem(at: $0) } }
        // Pairs share a creation time, so the id must break ties for no row to be skipped or repeated.
        let first = (0..<23).map { Self.order(String(format: "A%02d", $0), at: Double($0 / 2)) }
        try await Self.insert(
            first + [Self.order("GONE", .cancelled, at: 5), Self.order("M2", merchant: "m2", at: 5)],
            into: backend.store)
        let expected = first.sorted { ($0.createdAt, $0.id) > ($1.createdAt, $1.id) }.map(\.id)

        var arrived = 0
        let pages = try await Self.allPages(backend, "/v1/merchant/orders?limit=4", as: "m1", .merchant) { _ in
            // New orders land at the newest end while the merchant pages towards the oldest.
            arrived += 1
            try await Self.insert([Self.order("NEW\(arrived)", at: 1000 + Double(arrived))], into: backend.store)
        }
        #expect(pages.map(\.count) == [4, 4, 4, 4, 4, 3])
        #expect(pages.flatMap { $0 } == expected)

        let opsPages = try await Self.allPages(backend, "/v1/ops/trips?state=placed&limit=7", as: "ops", .ops)
        let placed = try backend.store.trips(status: "placed", limit: 1000).map(\.id)
        #expect(opsPages.flatMap { $0 } == placed)
        #expect(Set(placed) == Set(expected + (1...arrived).map { "NEW\($0)" } + ["M2"]))
        #expect(
            try await Self.allPages(backend, "/v1/ops/trips?limit=200", as: "ops", .ops) == [
                try backend.store.trips(status: nil, limit: 1000).map(\.id)
            ])
    }

    @Test func theMerchantListDefaultsToFiftyAndTheOpsListToTwoHundred() async throws {
        let backend = TestBackend()
        try await Self.insert((0..<210).map { Self.order("O\($0)", at: Double($0)) }, into: backend.store)
        let merchant = try await Self.list(backend, "/v1/merchant/orders", as: "m1", .merchant)
        #expect(merchant.trips.count == 50)
        #expect(merchant.nextCursor != nil)
        let ops = try await Self.list(backend, "/v1/ops/trips", as: "ops", .ops)
        #expect(ops.trips.count == 200)
        let rest = try await Self.list(backend, "/v1/ops/trips?cursor=\(try #require(ops.nextCursor))", as: "ops", .ops)
        #expect(rest.trips.map(\.id) == (0..<10).reversed().map { "O\($0)" })
        #expect(rest.nextCursor == nil)
    }

    static let invalidQueries: [(String, String)] = [
        ("limit=0", "/limit"), ("limit=201", "/limit"), ("limit=-3", "/limit"), ("limit=ten", "/limit"),
        ("limit=1.5", "/limit"),
        ("cursor=%21%21", "/cursor"), ("cursor=bm9iYXI", "/cursor"), ("cursor=fDEyMw", "/cursor"),
        ("cursor=MTJ8", "/cursor"),
    ]

    @Test(arguments: ["/v1/merchant/orders", "/v1/ops/trips"], invalidQueries)
    func aMalformedOrOutOfRangeLimitOrCursorIs422NamingTheParameter(
        _ path: String, _ invalid: (query: String, pointer: String)
    ) async throws {
        let backend = TestBackend()
        let role: Party = path.contains("ops") ? .ops : .merchant
        let r = await backend.call("GET", "\(path)?\(invalid.query)", token: backend.token("a1", role))
        #expect(r.status == 422)
        #expect(r.headers["Content-Type"]?.hasPrefix("application/problem+json") == true)
        let errors = try #require(json(r.body)["errors"] as? [[String: Any]])
        #expect(errors.map { $0["pointer"] as? String } == [invalid.pointer])
    }

    @Test func aCursorTokenIsOpaqueURLSafeAndReadsBackExactly() throws {
        let cursor = TripCursor(createdAt: 1_792_000_000.123_456_7, id: "T|42+/é")
        let token = cursor.token
        #expect(token.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") })
        #expect(TripCursor(token: token) == cursor)
        #expect(TripCursor(token: "") == nil)
        #expect(TripCursor(token: "a=b") == nil)
    }
}
