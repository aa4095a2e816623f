import Foundation
import Testing
import EnRouteDomain
import EnRouteModels
import EnRouteSQLite
import EnRoutePostgres
import TestSupport

/// Both directory adapters: what is saved is read back whole, lists page by id, lookups follow every write;
/// the SQLite one against a real file, beside the trip store, across a reopen.
@Suite struct DirectoryRepositoryTests {
    enum Kind: String, CaseIterable, CustomTestStringConvertible {
        case memory, sqlite, postgres
        var testDescription: String { rawValue }
        /// Memory and SQLite, and PostgreSQL when ENROUTE_TEST_POSTGRES_URL names a server.
        static var configured: [Kind] { [.memory, .sqlite] + (PostgresTestServer.url == nil ? [] : [.postgres]) }
    }

    /// A fresh adapter of `kind` and the folder to remove after (nil in memory).
    static func make(_ kind: Kind) throws -> (any DirectoryRepository, URL?) {
        switch kind {
        case .memory: return (InMemoryDirectory(), nil)
        case .sqlite:
            let dir = FileManager.default.temporaryDirectory.appendingPathComponent(
                "enroute-directory-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            return (try SQLiteDirectory(path: dir.appendingPathComponent("enroute.sqlite").path), dir)
        case .postgres:
            // A fresh schema, left for the scratch cluster's next reset (the directory's view is loaded on open).
            let trips = try PostgresTripStore(
                url: PostgresTestServer.url ?? "", schema: PostgresTestServer.freshSchema("directory"))
            return (try PostgresDirectory(tripStore: trips), nil)
        }
    }

    static let kamppi = TestDirectory.helsinki.merchant(id: "m1")!
    static let aino = ProviderProfile(
        id: "rider-1", firstName: "Aino", lastName: "Virtanen",
        vehicle: Vehicle(model: "Cargo e-bike", plate: "EB-101"),
        rating: 4.9, photoURL: URL(string: "https://photos.enroute.invalid/providers/rider-1.jpg")!)

    static func merchant(_ id: String) -> Merchant {
        Merchant(
            id: id, name: "Shop \(id)", address: "Mannerheimintie \(id.count), 00100 Helsinki",
            position: Coordinate(lat: 60.17, lng: 24.94),
            openingHours: [OpeningHours(day: "mon", opens: "09:00", closes: "17:00")],
            catalogue: [CatalogueItem(sku: "x-\(id)", name: "Thing", price: Money(amountMinor: 100, currency: "EUR"))])
    }

    @Test(arguments: Kind.configured)
    func aSavedMerchantIsReadBackWholeAndReplacingItSaysSo(kind: Kind) async throws {
        let (directory, dir) = try Self.make(kind)
        defer { dir.map { try? FileManager.default.removeItem(at: $0) } }
        #expect(try await directory.save(Self.kamppi) == true)
        #expect(directory.merchant(id: "m1") == Self.kamppi)
        #expect(try await directory.merchants(after: nil, limit: 10).items == [Self.kamppi])
        let smaller = Merchant(
            id: "m1", name: "Kamppi Kitchen", address: Self.kamppi.address, position: Self.kamppi.position,
            catalogue: [CatalogueItem(sku: "tea", name: "Green tea", price: Money(amountMinor: 280, currency: "EUR"))])
        #expect(try await directory.save(smaller) == false)
        // The lookup the order path makes sees the replacement at once, and the store holds it alone.
        #expect(directory.merchant(id: "m1") == smaller)
        #expect(try await directory.merchants(after: nil, limit: 10).items == [smaller])
    }

    @Test(arguments: Kind.configured)
    func aSavedProfileIsTheDriverTheRiderSees(kind: Kind) async throws {
        let (directory, dir) = try Self.make(kind)
        defer { dir.map { try? FileManager.default.removeItem(at: $0) } }
        #expect(directory.storedProvider(id: "rider-1") == nil)
        #expect(directory.provider(id: "rider-1").firstName == "Rider-1")  // a plain stand-in until a profile exists
        #expect(try await directory.save(Self.aino) == true)
        #expect(directory.storedProvider(id: "rider-1") == Self.aino)
        #expect(
            directory.provider(id: "rider-1").driver
                == Driver(
                    id: "rider-1", name: "Aino V.", carModel: "Cargo e-bike", plate: "EB-101",
                    rating: 4.9, photoURL: Self.aino.photoURL))
        let walking = ProviderProfile(
            id: "rider-1", firstName: "Aino", lastName: "V", vehicle: nil, rating: 4.5, photoURL: Self.aino.photoURL)
        #expect(try await directory.save(walking) == false)
        #expect(try await directory.providers(after: nil, limit: 5).items == [walking])
    }

    @Test(arguments: Kind.configured)
    func listsPageInIDOrderFromTheCursor(kind: Kind) async throws {
        let (directory, dir) = try Self.make(kind)
        defer { dir.map { try? FileManager.default.removeItem(at: $0) } }
        for id in ["m5", "m1", "m4", "m2", "m3"] { try await directory.save(Self.merchant(id)) }
        let first = try await directory.merchants(after: nil, limit: 2)
        #expect(first.items.map(\.id) == ["m1", "m2"] && first.next == "m2")
        let second = try await directory.merchants(after: first.next, limit: 2)
        #expect(second.items.map(\.id) == ["m3", "m4"] && second.next == "m4")
        let last = try await directory.merchants(after: second.next, limit: 2)
        #expect(last.items.map(\.id) == ["m5"] && last.next == nil)
        // A page that ends exactly at the last row says so.
        #expect(try await directory.merchants(after: "m3", limit: 2).next == nil)
    }

    @Test func theSQLiteDirectoryLivesBesideTheTripsAndSurvivesAReopen() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent(
            "enroute-directory-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("enroute.sqlite").path
        let trips = try SQLiteTripStore(path: path)
        do {
            let directory = try SQLiteDirectory(path: path)
            try await directory.save(Self.kamppi)
            try await directory.save(Self.aino)
        }
        let reopened = try SQLiteDirectory(path: path)
        #expect(reopened.merchant(id: "m1") == Self.kamppi)
        #expect(reopened.storedProvider(id: "rider-1") == Self.aino)
        #expect(reopened.schemaVersion == 2)
        // The trip store's own schema is untouched by the directory's.
        #expect(try trips.trip(id: "nope") == nil)
        // Pages walk the primary key, not a scan and sort.
        #expect(try reopened.merchantPagePlan().joined(separator: "\n").contains("PRIMARY KEY"))
    }
}
