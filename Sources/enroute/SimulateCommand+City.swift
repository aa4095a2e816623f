import Foundation
import EnRouteLogging
import CitySimulator
import EnRouteAPI
import EnRouteBackend
import EnRouteDomain
import EnRouteModels
import EnRouteNotifications
import EnRouteRoads
import HTTPEngine
import Routing

/// The simulated city drawn from a road graph: places on its main network, merchants at some of them, provider
/// profiles, the time zone of its longitude and the simulated date the run starts at (a weekday at 17:45 local, so the
/// evening rush ends during a 30-minute run).
struct CityMap {
    let places: [Coordinate]
    let merchants: [SimulatedMerchant]
    let directory: StaticDirectory
    let timeZone: TimeZone
    let startDate: Date

    init(
        _ network: RoadNetwork, mainComponent: [Bool], seed: UInt64, merchantCount: Int = 8,
        providerProfiles: Int = 100_000
    ) {
        var random = SeededGenerator(seed: seed, stream: "map")
        var places: [Coordinate] = []
        let edges = network.edgeCount
        for _ in 0..<min(2000, max(1, edges)) where edges > 0 {
            let edge = Int(random.unit() * Double(edges)) % edges
            if mainComponent.count == edges, !mainComponent[edge] { continue }
            guard let point = network.geometry(ofEdge: Int32(edge)).first else { continue }
            places.append(Coordinate(lat: point.lat, lng: point.lon))
        }
        self.places = places
        let catalogue = [
            CatalogueItem(sku: "meal", name: "Meal of the day", price: Money(amountMinor: 1290, currency: "EUR")),
            CatalogueItem(sku: "coffee", name: "Coffee", price: Money(amountMinor: 350, currency: "EUR")),
            CatalogueItem(sku: "groceries", name: "Bag of groceries", price: Money(amountMinor: 2450, currency: "EUR")),
        ]
        let sites =
            places.isEmpty
            ? [] : (0..<merchantCount).map { _ in places[Int(random.unit() * Double(places.count)) % places.count] }
        let directoryMerchants = sites.enumerated().map { i, site in
            Merchant(
                id: "sim-merchant-\(i + 1)", name: "Simulated kitchen \(i + 1)", address: "Simulated street \(i + 1)",
                position: site, catalogue: catalogue)
        }
        merchants = directoryMerchants.map {
            SimulatedMerchant(id: $0.id, position: $0.position, skus: $0.catalogue.map(\.sku))
        }
        let names = ["Aino", "Mikko", "Leena", "Sam", "Maya", "Omar", "Jo", "Ines", "Kai", "Lena"]
        let profiles = (0..<min(providerProfiles, 1000)).map { n in
            ProviderProfile(
                id: "sim-provider-\(n + 1)", firstName: names[n % names.count],
                vehicle: Vehicle(model: "Toyota Prius", plate: "SIM-\(n + 1)"),
                photoURL: URL(string: "https://photos.enroute.invalid/providers/sim-\(n + 1).jpg")!)
        }
        directory = StaticDirectory(merchants: directoryMerchants, providers: profiles)
        let meanLng = places.isEmpty ? 0 : places.map(\.lng).reduce(0, +) / Double(places.count)
        timeZone = TimeZone(secondsFromGMT: Int((meanLng / 15).rounded()) * 3600) ?? TimeZone(identifier: "UTC")!
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        startDate =
            calendar.date(from: DateComponents(year: 2026, month: 6, day: 3, hour: 17, minute: 45))
            ?? Date(timeIntervalSince1970: 1_780_000_000)
    }
}

/// The embedded server: the production Backend on the simulator's clock, SQLite in the run's directory, listening on
/// 127.0.0.1 on a free port; it answers the report's server questions from its store.
final class EmbeddedServer: ServerInspection, Sendable {
    let backend: Backend
    let server: HTTPServer
    let baseURL: URL
    let dispatch: DispatchPolicy

    private init(backend: Backend, server: HTTPServer, dispatch: DispatchPolicy) {
        self.backend = backend; self.server = server; self.dispatch = dispatch
        baseURL = URL(string: "http://127.0.0.1:\(server.port)")!
    }

    /// Starts a backend over `roads` whose time is `clock`/`now`, its directory seeded with the city's.
    static func start(
        roads: (any RoadRouting)?, city: CityMap, clock: any Clock<Duration>, now: @escaping @Sendable () -> Date,
        directory: URL, seed: UInt64, storage: BackendConfiguration.Storage? = nil,
        dispatch: DispatchPolicy = DispatchPolicy()
    ) async throws -> EmbeddedServer {
        var random = SeededGenerator(seed: seed, stream: "server")
        let secret = (0..<4).map { _ in String(random.next(), radix: 16) }.joined()
        var configuration = BackendConfiguration(
            storage: storage ?? .sqlite(path: directory.appendingPathComponent("enroute.sqlite").path),
            secret: secret)
        configuration.rateLimits = .off
        configuration.timeZone = city.timeZone
        configuration.dispatch = dispatch
        let effects = BackendEffects(
            clock: clock, now: now, tripIDs: SequentialIDGenerator(prefix: "T"),
            offerIDs: SequentialIDGenerator(prefix: "O"),
            nearbyJitterSeed: random.next(), push: LogPushGateway(log: .discard), log: .discard, roads: roads)
        let backend = try Backend(configuration, effects: effects)
        try backend.seed(city.directory)
        _ = try await backend.start()
        var http = HTTPServerConfiguration()
        http.host = "127.0.0.1"
        http.port = 0
        let server = HTTPServer(router: backend.router, configuration: http, metrics: backend.metrics)
        try server.start()
        return EmbeddedServer(backend: backend, server: server, dispatch: dispatch)
    }

    func stop() async {
        await server.shutdown()
        await backend.stop()
    }

    func findings(trips: [String], quotes: [String]) async throws -> ServerFindings {
        var steps: [String: [ServerFindings.Step]] = [:]
        var entries: [LedgerEntry] = []
        var captured: Set<String> = []
        for id in Set(trips) {
            steps[id] = try backend.store.changes(tripId: id).filter { $0.actorRole == .provider }
                .map { ServerFindings.Step(changeId: $0.changeId, status: $0.status) }
            entries += try backend.store.ledger(tripId: id)
            if let payment = try backend.store.trip(id: id)?.payment, payment.capturedMinor > 0 { captured.insert(id) }
        }
        // Quotes outlive their expiry by a month in the store: every one shown during the run is still there.
        var demand: [String: Double] = [:]
        for id in Set(quotes) {
            if let quote = try await backend.payments.quotes.store.quote(id: id) { demand[id] = quote.demand }
        }
        let window = dispatch.batchWindow.components
        return ServerFindings(
            providerSteps: steps, ledgerBalanced: Ledger.isBalanced(entries), captured: captured,
            dispatchPolicy: dispatch.matching.rawValue,
            dispatchWindowSeconds: Double(window.seconds) + Double(window.attoseconds) / 1e18, quoteDemand: demand)
    }
}
