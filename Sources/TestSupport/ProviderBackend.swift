public import Foundation
public import HTTPTransport
public import EnRouteModels
public import EnRouteDomain
public import EnRouteAPI
public import HTTPEngine
public import EnRouteBackend

/// The real API in memory with the provider side on the test's manual clock: presence, ingest,
/// dispatch (started unless asked not to) and the providers' streams.
public struct ProviderBackend: Sendable {
    public let backend: TestBackend
    public let providers: ProviderOperations
    public let paths: any PathStore
    public let metrics: MetricsRegistry
    public let router: Router

    public var clock: ManualClock { backend.clock }
    public var service: TripService { backend.service }

    /// Pickups and positions in central Helsinki.
    public static let pickup = Coordinate(lat: 60.1699, lng: 24.9384)

    /// `locations`: who is online and where (the backend's own in memory by default), on `clock`'s time.
    public init(
        policy: DispatchPolicy = DispatchPolicy(), fixLifetime: TimeInterval = 120, startDispatch: Bool = true,
        storage: BackendConfiguration.Storage = .memory, endedCacheLimit: Int = 10_000, cities: Cities = .everywhere,
        clock: ManualClock = ManualClock(), locations: (any ProviderLocations)? = nil
    ) throws {
        backend = TestBackend(
            clock: clock, storage: storage, endedCacheLimit: endedCacheLimit, dispatch: policy,
            fixLifetime: fixLifetime,
            cities: cities, locations: locations)
        paths = backend.backend.paths
        metrics = backend.metrics
        providers = backend.providers
        router = backend.router
        if startDispatch { try providers.dispatcher.start() }
    }

    public func token(_ account: String, _ role: Party) -> String { backend.token(account, role) }

    /// Ops hands `tripId` to `provider`, outside dispatch.
    public func assign(_ tripId: String, to provider: String) async -> (status: Int, body: [UInt8]) {
        await call("POST", "/v1/ops/trips/\(tripId)/assign", as: "ops", .ops, json: #"{"providerId":"\#(provider)"}"#)
    }

    /// Sends a request through this backend's router.
    public func call(
        _ method: String, _ path: String, as account: String, _ role: Party, json: String? = nil,
        headers: [String: String] = [:]
    ) async -> (status: Int, body: [UInt8]) {
        var h = HTTPHeaders(headers.map { ($0.key, $0.value) })
        h.add("Authorization", "Bearer \(token(account, role))")
        if json != nil { h.add("Content-Type", "application/json") }
        var query: [String: String] = [:]
        var bare = path
        if let q = path.firstIndex(of: "?") {
            bare = String(path[..<q])
            for pair in path[path.index(after: q)...].split(separator: "&") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                query[String(parts[0])] = parts.count > 1 ? String(parts[1]) : ""
            }
        }
        let response = await router.respond(
            to: HTTPRequest(
                method: method, path: bare, query: query, headers: h,
                body: json.map { Array($0.utf8) } ?? []))
        return (response.status, response.bodyBytes)
    }

    /// Puts `provider` online at `position` (a fix taken now).
    @discardableResult
    public func online(_ provider: String, at position: Coordinate) async -> Int {
        await call(
            "POST", "/v1/provider/availability", as: provider, .provider,
            json: #"{"online":true,"position":{"lat":\#(position.lat),"lng":\#(position.lng)}}"#
        ).status
    }

    /// Takes `provider` offline.
    @discardableResult
    public func offline(_ provider: String) async -> Int {
        await call("POST", "/v1/provider/availability", as: provider, .provider, json: #"{"online":false}"#).status
    }

    /// A customer's ride from the standard pickup.
    public func requestRide(_ customer: String = "c1") async throws -> Trip {
        try await backend.requestRide(customer)
    }

    /// Uploads a batch of fixes for `provider`.
    public func upload(
        _ provider: String, batch: String, _ fixes: [LocationFix]
    ) async throws -> (status: Int, result: LocationBatchResult?) {
        let body = String(
            decoding: try WireCoding.encoder().encode(LocationBatch(batchId: batch, fixes: fixes)), as: UTF8.self)
        let r = await call("POST", "/v1/provider/locations", as: provider, .provider, json: body)
        return (r.status, try? WireCoding.decoder().decode(LocationBatchResult.self, from: Data(r.body)))
    }

    /// A fix `metres` north of `origin`, recorded `seconds` after now.
    public func fix(
        _ origin: Coordinate = ProviderBackend.pickup, north metres: Double = 0, after seconds: TimeInterval = 0,
        accuracy: Double = 5, speed: Double = 8
    ) -> LocationFix {
        LocationFix(
            lat: origin.lat + metres / 111_195, lng: origin.lng, heading: 0, speed: speed, accuracy: accuracy,
            recordedAt: clock.date.addingTimeInterval(seconds))
    }

    /// A point `metres` north of the standard pickup.
    public static func north(_ metres: Double) -> Coordinate {
        Coordinate(lat: pickup.lat + metres / 111_195, lng: pickup.lng)
    }

    /// An in-process client for the provider's live stream, through the router.
    public func stream(
        _ account: String, _ role: Party, _ path: String
    ) async -> AsyncThrowingStream<ServerSentEvent, any Error> {
        let api = APIServer(
            baseURL: URL(string: "http://enroute.test")!, credentials: StaticAccessToken(token(account, role)))
        let request = await api.request("GET", path, headers: ["Accept": "text/event-stream"])
        return InProcessHTTPClient(router: router).events(request)
    }

    /// The trip as the service holds it now.
    public func trip(_ id: String) throws -> TripRecord? { try service.cached(id) }
}

/// Reads events off a provider's hub subscription one at a time.
public struct ProviderInbox {
    private var iterator: AsyncStream<ProviderEvent>.Iterator

    public init(_ providers: ProviderOperations, _ provider: String) {
        iterator = providers.events.subscribe(provider).makeAsyncIterator()
    }

    /// The next event named `name`, skipping others.
    public mutating func next(_ name: String) async throws -> ProviderEvent {
        while let event = await iterator.next() {
            if event.name == name { return event }
        }
        throw Failure("the stream ended before a \(name) event")
    }

    /// The next `offer` event's offer.
    public mutating func offer() async throws -> Offer {
        try WireCoding.decoder().decode(Offer.self, from: Data(try await next("offer").data))
    }
}
