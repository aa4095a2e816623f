public import Foundation
public import EnRouteDomain
import EnRouteModels
import SQLiteClient
import Synchronization

/// Merchants (with opening hours and catalogue) and provider profiles (with their vehicles) on SQLite,
/// in tables of their own, migrated on open, in the same file as the trip store (WAL lets the
/// connections share it). Lookups are answered from an in-memory view loaded on open and updated
/// after every committed write; lists page through the tables by their primary keys.
public final class SQLiteDirectory: DirectoryRepository, @unchecked Sendable {
    let db: Mutex<SQLiteDatabase>
    private let view = DirectoryView()
    /// Every stored phone number, loaded on open and kept current by `setPhoneNumber`.
    let phones = Mutex<[Account: E164PhoneNumber]>([:])
    public let path: String

    /// The directory's schema migrations, applied in order once each (recorded in `directory_migrations`).
    static let migrations: [String] = [
        """
        CREATE TABLE merchants (
            id TEXT PRIMARY KEY, name TEXT NOT NULL, address TEXT NOT NULL, lat REAL NOT NULL, lng REAL NOT NULL) \
        WITHOUT ROWID;
        CREATE TABLE merchant_hours (
            merchant_id TEXT NOT NULL REFERENCES merchants(id), ordinal INTEGER NOT NULL,
            day TEXT NOT NULL, opens TEXT NOT NULL, closes TEXT NOT NULL,
            PRIMARY KEY (merchant_id, ordinal)) WITHOUT ROWID;
        CREATE TABLE merchant_items (
            merchant_id TEXT NOT NULL REFERENCES merchants(id), ordinal INTEGER NOT NULL, sku TEXT NOT NULL,
            name TEXT NOT NULL, price_minor INTEGER NOT NULL, currency TEXT NOT NULL,
            PRIMARY KEY (merchant_id, ordinal)) WITHOUT ROWID;
        CREATE UNIQUE INDEX merchant_items_sku ON merchant_items(merchant_id, sku);
        CREATE TABLE providers (
            id TEXT PRIMARY KEY, first_name TEXT NOT NULL, last_name TEXT NOT NULL, rating REAL NOT NULL,
            photo_url TEXT NOT NULL) WITHOUT ROWID;
        CREATE TABLE provider_vehicles (
            provider_id TEXT PRIMARY KEY REFERENCES providers(id), model TEXT NOT NULL, plate TEXT NOT NULL) \
        WITHOUT ROWID;
        """,
        // Issue 15: the parties' own numbers, E.164, for the relay only (customers have no other directory row).
        """
        CREATE TABLE phone_numbers (
            role TEXT NOT NULL, account_id TEXT NOT NULL, e164 TEXT NOT NULL, PRIMARY KEY (role, account_id)) \
        WITHOUT ROWID;
        """,
    ]

    /// Opens (creating if needed) the directory tables in the database at `path` and loads the view;
    /// migrations applied now are stamped with `now()`.
    public init(path: String, now: @Sendable () -> Date = { Date() }) throws {
        self.path = path
        let database = try SQLiteDatabase(path: path)
        try database.migrate(Self.migrations, table: "directory_migrations", appliedAt: now())
        for merchant in try Self.merchants(database, after: nil, limit: nil) { view.put(merchant) }
        for profile in try Self.providers(database, after: nil, limit: nil) { view.put(profile) }
        let numbers = try Self.phoneNumbers(database)
        phones.withLock { $0 = numbers }
        db = Mutex(database)
    }

    /// The directory schema version now in force.
    public var schemaVersion: Int { Self.migrations.count }

    public func merchant(id: String) -> Merchant? { view.merchant(id: id) }
    public func provider(id: String) -> ProviderProfile { view.provider(id: id) ?? Self.plainProfile(id) }
    public func storedProvider(id: String) -> ProviderProfile? { view.provider(id: id) }

    @discardableResult public func save(_ merchant: Merchant) async throws -> Bool { try write(merchant) }
    @discardableResult public func save(_ profile: ProviderProfile) async throws -> Bool { try write(profile) }

    /// Writes `content` now, on the caller's thread (for a backend being built).
    public func seed(_ content: StaticDirectory) throws {
        for m in content.merchants { _ = try write(m) }
        for p in content.providers { _ = try write(p) }
    }

    public func merchants(after cursor: String?, limit: Int) async throws -> DirectoryPage<Merchant> {
        let rows = try db.withLock { try Self.merchants($0, after: cursor, limit: max(0, limit) + 1) }
        let items = Array(rows.prefix(max(0, limit)))
        return DirectoryPage(items: items, next: rows.count > items.count ? items.last?.id : nil)
    }

    public func providers(after cursor: String?, limit: Int) async throws -> DirectoryPage<ProviderProfile> {
        let rows = try db.withLock { try Self.providers($0, after: cursor, limit: max(0, limit) + 1) }
        let items = Array(rows.prefix(max(0, limit)))
        return DirectoryPage(items: items, next: rows.count > items.count ? items.last?.id : nil)
    }

    /// SQLite's plan for one page of merchants (`EXPLAIN QUERY PLAN`): shows the primary key serves it.
    public func merchantPagePlan() throws -> [String] {
        try db.withLock { db in
            try db.query(
                "EXPLAIN QUERY PLAN " + Self.merchantPage(after: true, limited: true), [.integer(1), .text("")]
            ) { $0.text(3) ?? "" }
        }
    }

    // MARK: - Writes

    private func write(_ merchant: Merchant) throws -> Bool {
        try db.withLock { db in
            let created = try db.transaction { () throws -> Bool in
                let existed =
                    try db.query("SELECT 1 FROM merchants WHERE id = ?1", [.text(merchant.id)]) { _ in true }.first
                    ?? false
                let id = SQLiteValue.text(merchant.id)
                try db.run("DELETE FROM merchant_hours WHERE merchant_id = ?1", [id])
                try db.run("DELETE FROM merchant_items WHERE merchant_id = ?1", [id])
                try db.run(
                    """
                    INSERT INTO merchants (id, name, address, lat, lng) VALUES (?1, ?2, ?3, ?4, ?5)
                    ON CONFLICT(id) DO UPDATE SET name = ?2, address = ?3, lat = ?4, lng = ?5
                    """,
                    [
                        id, .text(merchant.name), .text(merchant.address), .real(merchant.position.lat),
                        .real(merchant.position.lng),
                    ])
                for (i, h) in merchant.openingHours.enumerated() {
                    try db.run(
                        "INSERT INTO merchant_hours (merchant_id, ordinal, day, opens, closes) VALUES (?1, ?2, "
                            + "?3, ?4, ?5)",
                        [id, .integer(Int64(i)), .text(h.day), .text(h.opens), .text(h.closes)])
                }
                for (i, item) in merchant.catalogue.enumerated() {
                    try db.run(
                        """
                        INSERT INTO merchant_items (merchant_id, ordinal, sku, name, price_minor, currency) VALUES \
                        (?1, ?2, ?3, ?4, ?5, ?6)
                        """,
                        [
                            id, .integer(Int64(i)), .text(item.sku), .text(item.name),
                            .integer(Int64(item.price.amountMinor)),
                            .text(item.price.currency),
                        ])
                }
                return !existed
            }
            // After the commit, under the same lock: the view changes in the order the store did.
            view.put(merchant)
            return created
        }
    }

    private func write(_ profile: ProviderProfile) throws -> Bool {
        try db.withLock { db in
            let created = try db.transaction { () throws -> Bool in
                let existed =
                    try db.query("SELECT 1 FROM providers WHERE id = ?1", [.text(profile.id)]) { _ in true }.first
                    ?? false
                let id = SQLiteValue.text(profile.id)
                try db.run(
                    """
                    INSERT INTO providers (id, first_name, last_name, rating, photo_url) VALUES (?1, ?2, ?3, ?4, ?5)
                    ON CONFLICT(id) DO UPDATE SET first_name = ?2, last_name = ?3, rating = ?4, photo_url = ?5
                    """,
                    [
                        id, .text(profile.firstName), .text(profile.lastName), .real(profile.rating),
                        .text(profile.photoURL.absoluteString),
                    ])
                try db.run("DELETE FROM provider_vehicles WHERE provider_id = ?1", [id])
                if let vehicle = profile.vehicle {
                    try db.run(
                        "INSERT INTO provider_vehicles (provider_id, model, plate) VALUES (?1, ?2, ?3)",
                        [id, .text(vehicle.model), .text(vehicle.plate)])
                }
                return !existed
            }
            view.put(profile)
            return created
        }
    }

    // MARK: - Reads

    private static func merchantPage(after: Bool, limited: Bool) -> String {
        "SELECT id, name, address, lat, lng FROM merchants" + (after ? " WHERE id > ?2" : "") + " ORDER BY id"
            + (limited ? " LIMIT ?1" : "")
    }

    /// Merchants in id order after `cursor`, at most `limit` (all without one), with their hours and items.
    private static func merchants(_ db: SQLiteDatabase, after cursor: String?, limit: Int?) throws -> [Merchant] {
        let values: [SQLiteValue] = [.integer(Int64(limit ?? -1))] + (cursor.map { [.text($0)] } ?? [])
        let heads = try db.query(merchantPage(after: cursor != nil, limited: true), values) { row in
            (
                id: row.text(0) ?? "", name: row.text(1) ?? "", address: row.text(2) ?? "",
                position: Coordinate(lat: row.double(3), lng: row.double(4))
            )
        }
        return try heads.map { head in
            let hours = try db.query(
                "SELECT day, opens, closes FROM merchant_hours WHERE merchant_id = ?1 ORDER BY ordinal",
                [.text(head.id)]
            ) {
                OpeningHours(day: $0.text(0) ?? "", opens: $0.text(1) ?? "", closes: $0.text(2) ?? "")
            }
            let items = try db.query(
                "SELECT sku, name, price_minor, currency FROM merchant_items WHERE merchant_id = ?1 ORDER BY ordinal",
                [.text(head.id)]
            ) {
                CatalogueItem(
                    sku: $0.text(0) ?? "", name: $0.text(1) ?? "",
                    price: Money(amountMinor: Int($0.int(2)), currency: $0.text(3) ?? ""))
            }
            return Merchant(
                id: head.id, name: head.name, address: head.address, position: head.position, openingHours: hours,
                catalogue: items)
        }
    }

    /// Provider profiles in id order after `cursor`, at most `limit` (all without one), with their vehicles.
    private static func providers(_ db: SQLiteDatabase, after cursor: String?, limit: Int?) throws -> [ProviderProfile]
    {
        let values: [SQLiteValue] = [.integer(Int64(limit ?? -1))] + (cursor.map { [.text($0)] } ?? [])
        return try db.query(
            """
            SELECT p.id, p.first_name, p.last_name, p.rating, p.photo_url, v.model, v.plate
            FROM providers p LEFT JOIN provider_vehicles v ON v.provider_id = p.id
            \(cursor != nil ? "WHERE p.id > ?2 " : "")ORDER BY p.id LIMIT ?1
            """, values
        ) { row in
            let vehicle = row.isNull(5) ? nil : Vehicle(model: row.text(5) ?? "", plate: row.text(6) ?? "")
            return ProviderProfile(
                id: row.text(0) ?? "", firstName: row.text(1) ?? "", lastName: row.text(2) ?? "", vehicle: vehicle,
                rating: row.double(3),
                photoURL: URL(string: row.text(4) ?? "") ?? URL(string: "https://photos.enroute.invalid/providers/")!)
        }
    }
}
