public import Foundation
public import EnRouteDomain
public import EnRouteModels
import PostgresClient
import Synchronization

/// Merchants (with opening hours and catalogue) and provider profiles (with their vehicles) on PostgreSQL, in tables of
/// their own (migrated by `directory_migrations`) on the trip store's connections. Lookups are answered from an
/// in-memory view loaded on open and updated after every committed write; lists page through the tables by their keys.
public final class PostgresDirectory: DirectoryRepository, Sendable {
    let store: PostgresTripStore
    private let view = DirectoryView()
    /// Held across a write and its view update, so the view changes in the order the database did.
    let writes = Mutex(())
    /// Every stored phone number, loaded on open and kept current by `setPhoneNumber`.
    let phones = Mutex<[Account: E164PhoneNumber]>([:])

    /// The directory's schema migrations, applied in order once each.
    static let migrations: [String] = [
        """
        CREATE TABLE merchants (
            id TEXT COLLATE "C" PRIMARY KEY, name TEXT NOT NULL, address TEXT NOT NULL, lat DOUBLE PRECISION NOT NULL, \
        lng DOUBLE PRECISION NOT NULL);
        CREATE TABLE merchant_hours (
            merchant_id TEXT NOT NULL REFERENCES merchants(id), ordinal INTEGER NOT NULL,
            day TEXT NOT NULL, opens TEXT NOT NULL, closes TEXT NOT NULL, PRIMARY KEY (merchant_id, ordinal));
        CREATE TABLE merchant_items (
            merchant_id TEXT NOT NULL REFERENCES merchants(id), ordinal INTEGER NOT NULL, sku TEXT NOT NULL,
            name TEXT NOT NULL, price_minor BIGINT NOT NULL, currency TEXT NOT NULL, PRIMARY KEY \
        (merchant_id, ordinal));
        CREATE UNIQUE INDEX merchant_items_sku ON merchant_items(merchant_id, sku);
        CREATE TABLE providers (
            id TEXT COLLATE "C" PRIMARY KEY, first_name TEXT NOT NULL, last_name TEXT NOT NULL, rating DOUBLE \
        PRECISION NOT NULL,
            photo_url TEXT NOT NULL);
        CREATE TABLE provider_vehicles (
            provider_id TEXT PRIMARY KEY REFERENCES providers(id), model TEXT NOT NULL, plate TEXT NOT NULL);
        CREATE TABLE phone_numbers (
            role TEXT NOT NULL, account_id TEXT NOT NULL, e164 TEXT NOT NULL, PRIMARY KEY (role, account_id));
        """
    ]

    /// Opens (creating if needed) the directory tables in `tripStore`'s database and loads the view.
    public init(tripStore: PostgresTripStore, now: @Sendable () -> Date = { Date() }) throws {
        store = tripStore
        try store.migrateCompanion(Self.migrations, table: "directory_migrations", appliedAt: now())
        let (merchants, providers, numbers) = try store.read { db in
            (
                try Self.merchants(db, after: nil, limit: nil), try Self.providers(db, after: nil, limit: nil),
                try Self.phoneNumbers(db)
            )
        }
        for merchant in merchants { view.put(merchant) }
        for profile in providers { view.put(profile) }
        phones.withLock { $0 = numbers }
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
        let rows = try await store.perform { try Self.merchants($0, after: cursor, limit: max(0, limit) + 1) }
        let items = Array(rows.prefix(max(0, limit)))
        return DirectoryPage(items: items, next: rows.count > items.count ? items.last?.id : nil)
    }

    public func providers(after cursor: String?, limit: Int) async throws -> DirectoryPage<ProviderProfile> {
        let rows = try await store.perform { try Self.providers($0, after: cursor, limit: max(0, limit) + 1) }
        let items = Array(rows.prefix(max(0, limit)))
        return DirectoryPage(items: items, next: rows.count > items.count ? items.last?.id : nil)
    }

    // MARK: - Writes

    private func write(_ merchant: Merchant) throws -> Bool {
        try writes.withLock { _ in
            let created = try store.read { db in
                try db.transaction { () throws -> Bool in
                    let id = PostgresValue.text(merchant.id)
                    let existed = try !db.query("SELECT 1 FROM merchants WHERE id = $1 FOR UPDATE", [id]).isEmpty
                    try db.run("DELETE FROM merchant_hours WHERE merchant_id = $1", [id])
                    try db.run("DELETE FROM merchant_items WHERE merchant_id = $1", [id])
                    try db.run(
                        """
                        INSERT INTO merchants (id, name, address, lat, lng) VALUES ($1, $2, $3, $4, $5)
                        ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, address = EXCLUDED.address, lat = \
                        EXCLUDED.lat, lng = EXCLUDED.lng
                        """,
                        [
                            id, .text(merchant.name), .text(merchant.address), .double(merchant.position.lat),
                            .double(merchant.position.lng),
                        ])
                    for (i, h) in merchant.openingHours.enumerated() {
                        try db.run(
                            "INSERT INTO merchant_hours (merchant_id, ordinal, day, opens, closes) VALUES ($1, $2, "
                                + "$3, $4, $5)",
                            [id, .int(i), .text(h.day), .text(h.opens), .text(h.closes)])
                    }
                    for (i, item) in merchant.catalogue.enumerated() {
                        try db.run(
                            """
                            INSERT INTO merchant_items (merchant_id, ordinal, sku, name, price_minor, currency) VALUES \
                            ($1, $2, $3, $4, $5, $6)
                            """,
                            [
                                id, .int(i), .text(item.sku), .text(item.name), .int(item.price.amountMinor),
                                .text(item.price.currency),
                            ])
                    }
                    return !existed
                }
            }
            view.put(merchant)
            return created
        }
    }

    private func write(_ profile: ProviderProfile) throws -> Bool {
        try writes.withLock { _ in
            let created = try store.read { db in
                try db.transaction { () throws -> Bool in
                    let id = PostgresValue.text(profile.id)
                    let existed = try !db.query("SELECT 1 FROM providers WHERE id = $1 FOR UPDATE", [id]).isEmpty
                    try db.run(
                        """
                        INSERT INTO providers (id, first_name, last_name, rating, photo_url) VALUES ($1, $2, $3, $4, $5)
                        ON CONFLICT (id) DO UPDATE SET first_name = EXCLUDED.first_name, last_name = EXCLUDED.last_name,
                        rating = EXCLUDED.rating, photo_url = EXCLUDED.photo_url
                        """,
                        [
                            id, .text(profile.firstName), .text(profile.lastName), .double(profile.rating),
                            .text(profile.photoURL.absoluteString),
                        ])
                    try db.run("DELETE FROM provider_vehicles WHERE provider_id = $1", [id])
                    if let vehicle = profile.vehicle {
                        try db.run(
                            "INSERT INTO provider_vehicles (provider_id, model, plate) VALUES ($1, $2, $3)",
                            [id, .text(vehicle.model), .text(vehicle.plate)])
                    }
                    return !existed
                }
            }
            view.put(profile)
            return created
        }
    }

    // MARK: - Reads

    /// Merchants in id order after `cursor`, at most `limit` (all without one), with their hours and items.
    private static func merchants(_ db: PostgresConnection, after cursor: String?, limit: Int?) throws -> [Merchant] {
        let values: [PostgresValue] = [limit.map { .int($0) } ?? .null] + (cursor.map { [.text($0)] } ?? [])
        let heads = try db.query(
            "SELECT id, name, address, lat, lng FROM merchants" + (cursor != nil ? " WHERE id > $2" : "")
                + " ORDER BY id LIMIT $1",
            values
        ).map { row in
            (
                id: row.text(0) ?? "", name: row.text(1) ?? "", address: row.text(2) ?? "",
                position: Coordinate(lat: row.double(3), lng: row.double(4))
            )
        }
        return try heads.map { head in
            let hours = try db.query(
                "SELECT day, opens, closes FROM merchant_hours WHERE merchant_id = $1 ORDER BY ordinal",
                [.text(head.id)]
            ).map {
                OpeningHours(day: $0.text(0) ?? "", opens: $0.text(1) ?? "", closes: $0.text(2) ?? "")
            }
            let items = try db.query(
                "SELECT sku, name, price_minor, currency FROM merchant_items WHERE merchant_id = $1 ORDER BY ordinal",
                [.text(head.id)]
            ).map {
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
    private static func providers(
        _ db: PostgresConnection, after cursor: String?, limit: Int?
    ) throws -> [ProviderProfile] {
        let values: [PostgresValue] = [limit.map { .int($0) } ?? .null] + (cursor.map { [.text($0)] } ?? [])
        return try db.query(
            """
            SELECT p.id, p.first_name, p.last_name, p.rating, p.photo_url, v.model, v.plate
            FROM providers p LEFT JOIN provider_vehicles v ON v.provider_id = p.id
            \(cursor != nil ? "WHERE p.id > $2 " : "")ORDER BY p.id LIMIT $1
            """, values
        ).map { row in
            let vehicle = row.isNull(5) ? nil : Vehicle(model: row.text(5) ?? "", plate: row.text(6) ?? "")
            return ProviderProfile(
                id: row.text(0) ?? "", firstName: row.text(1) ?? "", lastName: row.text(2) ?? "", vehicle: vehicle,
                rating: row.double(3),
                photoURL: URL(string: row.text(4) ?? "") ?? URL(string: "https://photos.enroute.invalid/providers/")!)
        }
    }

    /// Every stored number; a row that no longer parses (never written by this code) is skipped.
    static func phoneNumbers(_ db: PostgresConnection) throws -> [Account: E164PhoneNumber] {
        let rows = try db.query("SELECT role, account_id, e164 FROM phone_numbers").map {
            row -> (Account, E164PhoneNumber)? in
            guard let role = Party(rawValue: row.text(0) ?? ""), let number = E164PhoneNumber(row.text(2) ?? "") else {
                return nil
            }
            return (Account(id: row.text(1) ?? "", role: role), number)
        }
        return Dictionary(rows.compactMap { $0 }, uniquingKeysWith: { _, last in last })
    }
}

/// The parties' phone numbers in the directory's `phone_numbers` table.
extension PostgresDirectory: PhoneBook {
    public func phoneNumber(of account: Account) -> E164PhoneNumber? { phones.withLock { $0[account] } }

    public func setPhoneNumber(_ number: E164PhoneNumber, for account: Account) async throws {
        try writes.withLock { _ in
            try store.read { db in
                try db.run(
                    """
                    INSERT INTO phone_numbers (role, account_id, e164) VALUES ($1, $2, $3)
                    ON CONFLICT (role, account_id) DO UPDATE SET e164 = EXCLUDED.e164
                    """, [.text(account.role.rawValue), .text(account.id), .text(number.e164)])
            }
            phones.withLock { $0[account] = number }
        }
    }
}
