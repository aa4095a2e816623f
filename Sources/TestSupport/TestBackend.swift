public import Foundation
import EnRouteModels
public import EnRouteDomain
public import EnRouteAPI
public import EnRouteBackend
public import EnRouteNotifications
public import HTTPEngine
public import HTTPTransport
public import EnRouteWeb
public import EnRouteLogging

/// The production backend (`Backend`, the composition root) on a manual clock with sequential ids and
/// a fixed jitter seed, for tests. Dispatch and the push sender run only when a test starts them.
public struct TestBackend: Sendable {
    /// The secret tests sign tokens with.
    public static let secret = "test-secret-0123456789abcdef"

    public let backend: Backend
    public let clock: ManualClock
    public var store: any TripStore { backend.store }
    public var service: TripService { backend.service }
    public var auth: Authenticator { backend.auth }
    public var api: EnRouteAPI { backend.api }
    public var router: Router { backend.router }
    public var providers: ProviderOperations { backend.providers }
    public var metrics: MetricsRegistry { backend.metrics }
    /// The payment gateway (the sandbox unless the test gave another).
    public var payments: any PaymentGateway { backend.effects.payments }

    /// A backend over `storage` (memory by default) whose time is `clock`, its directory seeded with `directory`.
    /// `rateLimits` default to none,
    /// so tests may create freely; they run on the same clock. Pushes go to `push` (dropped by default); routes come
    /// from `roads` (none by default: straight lines); payments go to `payments` (a deterministic sandbox by default).
    /// Nodes
    /// sharing a `liveBus` share `locations` too (who is online and where); nil: the backend's own in memory.
    public init(
        clock: ManualClock = ManualClock(), storage: BackendConfiguration.Storage = .memory,
        directory: StaticDirectory = TestDirectory.helsinki, endedCacheLimit: Int = 10_000,
        rateLimits: RateLimits = .off,
        dispatch: DispatchPolicy = DispatchPolicy(), fixLifetime: TimeInterval = 120, offerIDPrefix: String = "O",
        jitterSeed: UInt64 = 42, push: any PushGateway = LogPushGateway(log: .discard), openAPI: String = "",
        roads: (any RoadRouting)? = nil, payments: (any PaymentGateway)? = nil,
        paymentWebhook: (@Sendable ([UInt8], String?) throws -> GatewayEvent)? = nil,
        web: WebConfiguration = WebConfiguration(), roadMap: RoadMap? = nil,
        telephony: (any TelephonyRelay)? = nil, calls: CallPolicy = CallPolicy(), cities: Cities = .everywhere,
        node: String = "main", liveBus: (any LiveBus)? = nil, locations: (any ProviderLocations)? = nil,
        log: Logger = .discard
    ) {
        self.clock = clock
        var configuration = BackendConfiguration(storage: TestStorage.resolve(storage), secret: Self.secret)
        configuration.postgresPool = TestStorage.poolLimits
        configuration.endedTripCache = endedCacheLimit
        configuration.rateLimits = rateLimits
        configuration.dispatch = dispatch
        configuration.fixLifetime = fixLifetime
        configuration.openAPI = openAPI
        configuration.web = web
        configuration.calls = calls
        configuration.cities = cities
        configuration.node = node
        // Nodes sharing a store must not hand out the same ids: each node's ids carry its name.
        let shared = liveBus == nil ? "" : "\(node)-"
        var effects = BackendEffects(
            clock: clock, now: { clock.date }, tripIDs: SequentialIDGenerator(prefix: "T" + shared),
            offerIDs: SequentialIDGenerator(prefix: offerIDPrefix + shared), nearbyJitterSeed: jitterSeed,
            push: push, log: log, roads: roads, payments: payments,
            paymentMethodIDs: liveBus == nil ? nil : SequentialIDGenerator(prefix: shared),
            quoteIDs: liveBus == nil ? nil : SequentialIDGenerator(prefix: shared), paymentWebhook: paymentWebhook)
        effects.liveBus = liveBus
        effects.providerLocations = locations
        if liveBus != nil { effects.uploadIDs = SequentialIDGenerator(prefix: "U" + shared) }
        effects.roadMap = roadMap
        effects.telephony = telephony
        // The configurations tests build are valid by construction; a failure to open a test database is fatal to the
        // test.
        backend = try! Backend(configuration, effects: effects)
        try! backend.seed(directory)
    }

    /// A bearer token for `account` in `role`.
    public func token(_ account: String, _ role: Party) -> String {
        (try? auth.token(account: account, role: role)) ?? ""
    }

    /// An in-process client kit transport with the API server address for `account`.
    public func client(_ account: String, _ role: Party) -> (http: InProcessHTTPClient, server: APIServer) {
        (
            InProcessHTTPClient(router: router),
            APIServer(
                baseURL: URL(string: "http://enroute.test")!, credentials: StaticAccessToken(token(account, role)))
        )
    }

    /// Sends a request through the router and returns status and body.
    public func call(
        _ method: String, _ path: String, token: String?, json: String? = nil,
        headers: [String: String] = [:]
    ) async -> (status: Int, headers: HTTPHeaders, body: [UInt8]) {
        var h = HTTPHeaders(headers.map { ($0.key, $0.value) })
        if let token { h.add("Authorization", "Bearer \(token)") }
        if json != nil { h.add("Content-Type", "application/json") }
        let (path, query) = Self.split(path)
        let response = await router.respond(
            to: HTTPRequest(
                method: method, path: path, query: query, headers: h,
                body: json.map { Array($0.utf8) } ?? []))
        return (response.status, response.headers, response.bodyBytes)
    }

    /// Ops hands `tripId` to `provider` (`POST /v1/ops/trips/{id}/assign`), as a test's stand-in for an accepted offer.
    public func assign(
        _ tripId: String, to provider: String
    ) async -> (status: Int, headers: HTTPHeaders, body: [UInt8]) {
        await call(
            "POST", APIPath.opsTripAssign(tripId), token: token("ops", .ops), json: #"{"providerId":"\#(provider)"}"#)
    }

    static func split(_ path: String) -> (String, [String: String]) {
        guard let q = path.firstIndex(of: "?") else { return (path, [:]) }
        var query: [String: String] = [:]
        for pair in path[path.index(after: q)...].split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            query[String(parts[0])] = parts.count > 1 ? String(parts[1]).removingPercentEncoding ?? "" : ""
        }
        return (String(path[..<q]), query)
    }
}

/// The merchants tests order from, in central Helsinki (the same ids `enroute seed --city helsinki` writes),
/// with every SKU the tests put in a basket.
public enum TestDirectory {
    static func eur(_ minor: Int) -> Money { Money(amountMinor: minor, currency: "EUR") }
    static let week = OpeningHours.days.map { OpeningHours(day: $0, opens: "08:00", closes: "22:00") }

    public static let helsinki = StaticDirectory(merchants: [
        Merchant(
            id: "m1", name: "Kamppi Kitchen", address: "Simonkatu 8, 00100 Helsinki",
            position: Coordinate(lat: 60.16949, lng: 24.93752), openingHours: week,
            catalogue: [
                CatalogueItem(sku: "coffee", name: "Filter coffee", price: eur(350)),
                CatalogueItem(sku: "tea", name: "Black tea", price: eur(300)),
                CatalogueItem(sku: "bread", name: "Rye bread", price: eur(420)),
                CatalogueItem(sku: "oat-milk-1l", name: "Oat milk 1 l", price: eur(229)),
            ]),
        Merchant(
            id: "m2", name: "Kallio Deli", address: "Paasivuorenkatu 4, 00530 Helsinki",
            position: Coordinate(lat: 60.17848, lng: 24.94750), openingHours: week,
            catalogue: [
                CatalogueItem(sku: "sandwich", name: "Smoked salmon sandwich", price: eur(890))
            ]),
        Merchant(
            id: "m3", name: "Punavuori Pharmacy", address: "Bulevardi 21, 00120 Helsinki",
            position: Coordinate(lat: 60.16449, lng: 24.93751), openingHours: week,
            catalogue: [
                CatalogueItem(sku: "plasters", name: "Plasters, 20", price: eur(495))
            ]),
    ])
}

extension Logger {
    /// A logger handing every record, at every level, to `write` as a text line on a fixed clock.
    public static func lines(_ write: @escaping @Sendable (String) -> Void) -> Logger {
        Logger(
            label: "test",
            handler: StreamLogHandler(
                format: .text, level: .trace, now: { Date(timeIntervalSince1970: 0) }, write: write))
    }
}
