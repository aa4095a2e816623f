import Foundation
import EnRouteDomain
import EnRouteModels
import EnRouteSQLite
import EnRoutePostgres

/// `enroute seed --city helsinki`: writes a city's demo merchants and provider profiles into the server's database.
enum SeedCommand {
    static let spec = CommandSpec(
        name: "seed",
        synopsis: """
            Usage: enroute seed --city CITY [--db PATH | --store URL]

            Writes the demo merchants (address, opening hours, catalogue) and provider profiles (with their vehicles)
            of CITY into the database `enroute serve` reads, creating or replacing each by id: running it again
            changes nothing. Cities: \(DemoCities.names.joined(separator: ", ")).
            """,
        sections: [
            (
                nil,
                [
                    .value(
                        "city", "CITY",
                        "The city whose demo directory to write (\(DemoCities.names.joined(separator: ", "))."),
                    .value(
                        "db", "PATH", env: "ENROUTE_DB",
                        "The server's SQLite database (default ./enroute.sqlite, env ENROUTE_DB)."),
                    .value(
                        "store", "URL", env: "ENROUTE_STORE",
                        """
                        The server's store as `enroute serve --store` takes it: an SQLite file path or \
                        postgres://user@host:port/db
                        (env ENROUTE_STORE; default: --db).
                        """),
                ]
            )
        ])

    static func run(_ args: [String], print: (String) -> Void = { Swift.print($0) }) async throws -> Int32 {
        let options = try spec.parse(args)
        if options.has("help") { print(spec.helpText); return 0 }
        guard let city = options.string("city"), !city.isEmpty else {
            throw CLIError("--city is required (see `enroute seed --help`)")
        }
        guard let content = DemoCities.directory(city) else {
            throw CLIError("unknown city '\(city)' (known: \(DemoCities.names.joined(separator: ", ")))")
        }
        let storage = try ServeCommand.storage(options)
        var created = 0
        switch storage {
        case .sqlite(let path):
            created = try await save(content, into: try SQLiteDirectory(path: path))
        case .postgres(let url, let schema):
            // The trip store migrates every table first, as `enroute serve` does on start.
            let trips = try PostgresTripStore(url: url, schema: schema)
            defer { trips.close() }
            created = try await save(content, into: try PostgresDirectory(tripStore: trips))
        case .memory:
            throw CLIError("a directory in memory would be gone when seed exits; give --db or --store")
        }
        let place = if case .sqlite(let path) = storage { path } else { ServeCommand.describe(storage) }
        print(
            "seeded \(city) into \(place): \(content.merchants.count) merchants, \(content.providers.count) provider "
                + "profiles (\(created) new)"
        )
        return 0
    }

    /// Writes the merchants and provider profiles; how many were new.
    private static func save(_ content: StaticDirectory, into directory: some DirectoryRepository) async throws -> Int {
        var created = 0
        for merchant in content.merchants where try await directory.save(merchant) { created += 1 }
        for profile in content.providers where try await directory.save(profile) { created += 1 }
        return created
    }
}

/// The demo directories `enroute seed` knows, by city.
enum DemoCities {
    static let names = ["helsinki"]

    static func directory(_ city: String) -> StaticDirectory? {
        switch city.lowercased() {
        case "helsinki": helsinki
        default: nil
        }
    }

    private static func eur(_ minor: Int) -> Money { Money(amountMinor: minor, currency: "EUR") }
    private static func hours(
        weekdays: (String, String), saturday: (String, String)?, sunday: (String, String)?
    ) -> [OpeningHours] {
        OpeningHours.days.prefix(5).map { OpeningHours(day: $0, opens: weekdays.0, closes: weekdays.1) }
            + (saturday.map { [OpeningHours(day: "sat", opens: $0.0, closes: $0.1)] } ?? [])
            + (sunday.map { [OpeningHours(day: "sun", opens: $0.0, closes: $0.1)] } ?? [])
    }
    private static func photo(_ id: String) -> URL {
        URL(string: "https://photos.enroute.invalid/providers/\(id).jpg")!
    }

    /// The merchants the demo and the simulator order from (m1..m3, central Helsinki) and the demo's providers.
    static let helsinki = StaticDirectory(
        merchants: [
            Merchant(
                id: "m1", name: "Kamppi Kitchen", address: "Simonkatu 8, 00100 Helsinki",
                position: Coordinate(lat: 60.16949, lng: 24.93752),
                openingHours: hours(
                    weekdays: ("07:30", "21:00"), saturday: ("09:00", "21:00"), sunday: ("10:00", "18:00")),
                catalogue: [
                    CatalogueItem(sku: "coffee", name: "Filter coffee", price: eur(350)),
                    CatalogueItem(sku: "tea", name: "Black tea", price: eur(300)),
                    CatalogueItem(sku: "bread", name: "Rye bread (ruisleipä)", price: eur(420)),
                    CatalogueItem(sku: "oat-milk-1l", name: "Oat milk 1 l", price: eur(229)),
                    CatalogueItem(sku: "korvapuusti", name: "Cinnamon bun", price: eur(380)),
                ]),
            Merchant(
                id: "m2", name: "Kallio Deli", address: "Paasivuorenkatu 4, 00530 Helsinki",
                position: Coordinate(lat: 60.17848, lng: 24.94750),
                openingHours: hours(weekdays: ("10:00", "20:00"), saturday: ("10:00", "18:00"), sunday: nil),
                catalogue: [
                    CatalogueItem(sku: "salmon-sandwich", name: "Smoked salmon sandwich", price: eur(890)),
                    CatalogueItem(sku: "karelian-pie", name: "Karelian pie", price: eur(250)),
                    CatalogueItem(sku: "salad", name: "Beetroot salad", price: eur(1090)),
                ]),
            Merchant(
                id: "m3", name: "Punavuori Pharmacy", address: "Bulevardi 21, 00120 Helsinki",
                position: Coordinate(lat: 60.16449, lng: 24.93751),
                openingHours: hours(weekdays: ("08:00", "20:00"), saturday: ("10:00", "16:00"), sunday: nil),
                catalogue: [
                    CatalogueItem(sku: "plasters", name: "Plasters, 20", price: eur(495)),
                    CatalogueItem(sku: "ibuprofen-200", name: "Ibuprofen 200 mg, 20 tablets", price: eur(690)),
                    CatalogueItem(sku: "sunscreen", name: "Sunscreen SPF 30, 100 ml", price: eur(1490)),
                ]),
        ],
        providers: [
            ProviderProfile(
                id: "rider-1", firstName: "Aino", lastName: "Virtanen",
                vehicle: Vehicle(model: "Cargo e-bike", plate: "EB-101"),
                rating: 4.9, photoURL: photo("rider-1")),
            ProviderProfile(
                id: "driver-1", firstName: "Mikko", lastName: "Korhonen",
                vehicle: Vehicle(model: "Toyota Corolla", plate: "ZKL-123"),
                rating: 4.8, photoURL: photo("driver-1")),
            ProviderProfile(
                id: "driver-2", firstName: "Leena", lastName: "Nieminen",
                vehicle: Vehicle(model: "Škoda Octavia", plate: "BTR-456"),
                rating: 4.7, photoURL: photo("driver-2")),
        ])
}
