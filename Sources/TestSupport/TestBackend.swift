import Foundation
public import EnRouteDomain
public import EnRouteAPI
public import HTTPEngine
public import ClientKit

/// The real trip service and API in memory, with a manual clock and sequential ids, for tests.
public struct TestBackend: Sendable {
    public let clock: ManualClock
    public let store: any TripStore
    public let service: TripService
    public let auth: Authenticator
    public let api: EnRouteAPI
    public let router: Router

    /// A backend over `store` (in memory by default) whose time is `clock`; `rateLimits` (none by
    /// default, so tests may create freely) run on the same clock.
    public init(clock: ManualClock = ManualClock(), store: any TripStore = InMemoryTripStore(),
                observers: [any TripChangeObserver] = [], directory: any PartyDirectory = StaticDirectory.helsinkiDemo,
                endedCacheLimit: Int = 10_000, rateLimits: RateLimits = .off) {
        self.clock = clock
        self.store = store
        let now: @Sendable () -> Date = { clock.date }
        service = TripService(store: store, directory: directory, ids: SequentialIDGenerator(prefix: "T"), observers: observers,
                              endedCacheLimit: endedCacheLimit, now: now)
        auth = Authenticator(secret: "test-secret-0123456789abcdef", now: now)
        api = EnRouteAPI(service: service, auth: auth, metrics: MetricsRegistry(), rateLimiter: RateLimiter(rateLimits, clock: clock))
        router = api.router()
    }

    /// A bearer token for `account` in `role`.
    public func token(_ account: String, _ role: Party) -> String {
        (try? auth.token(account: account, role: role)) ?? ""
    }

    /// An in-process client kit transport with the API server address for `account`.
    public func client(_ account: String, _ role: Party) -> (http: InProcessHTTPClient, server: APIServer) {
        (InProcessHTTPClient(router: router),
         APIServer(baseURL: URL(string: "http://enroute.test")!, credentials: StaticAccessToken(token(account, role))))
    }

    /// Sends a request through the router and returns status and body.
    public func call(_ method: String, _ path: String, token: String?, json: String? = nil,
                     headers: [String: String] = [:]) async -> (status: Int, headers: HTTPHeaders, body: [UInt8]) {
        var h = HTTPHeaders(headers.map { ($0.key, $0.value) })
        if let token { h.add("Authorization", "Bearer \(token)") }
        if json != nil { h.add("Content-Type", "application/json") }
        let (path, query) = Self.split(path)
        let response = await router.respond(to: HTTPRequest(method: method, path: path, query: query, headers: h,
                                                            body: json.map { Array($0.utf8) } ?? []))
        return (response.status, response.headers, response.bodyBytes)
    }

    /// Ops hands `tripId` to `provider` (`POST /v1/ops/trips/{id}/assign`), as a test's stand-in for an accepted offer.
    public func assign(_ tripId: String, to provider: String) async -> (status: Int, headers: HTTPHeaders, body: [UInt8]) {
        await call("POST", "/v1/ops/trips/\(tripId)/assign", token: token("ops", .ops), json: #"{"providerId":"\#(provider)"}"#)
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
