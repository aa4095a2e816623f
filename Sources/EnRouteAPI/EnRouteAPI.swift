import Foundation
public import HTTPEngine
public import EnRouteDomain
import EnRouteModels

/// Ops handing a trip to a provider outside dispatch: who, which trip, to whom, and why.
public struct OpsOverride: Sendable, Equatable, CustomStringConvertible {
    public let opsId: String
    public let tripId: String
    public let providerId: String
    public let reason: String?
    public var description: String {
        "ops \(opsId) assigned trip \(tripId) to provider \(providerId)"
            + (reason.map { ": \($0)" } ?? " (no reason given)")
    }
}

/// The HTTP API of the backend: every route of the apps and the console over the domain, in route groups (`Routes/`),
/// with idempotency, rate limits and error mapping applied in one place each.
public struct EnRouteAPI: Sendable {
    public let service: TripService
    public let auth: Authenticator
    public let metrics: MetricsRegistry
    public let wire: WireMapping
    /// The OpenAPI document served at `/openapi.yaml`.
    public let openAPI: String
    /// Answers readiness: true when the store can be read.
    public let ready: @Sendable () -> Bool
    /// Presence, location ingest, dispatch and the providers' streams.
    public let providers: ProviderOperations
    /// Per-account limits on creates, steps, location batches and estimates.
    public let rateLimiter: RateLimiter
    /// Device registration and notification opens.
    public let devices: NotificationsAPI
    /// Merchants and provider profiles, managed by ops.
    public let directory: any DirectoryRepository
    /// The road network behind routes and guidance; nil when the server runs without one.
    public let roads: (any RoadRouting)?
    /// The gateway's callbacks and the sandbox's challenge page.
    public let paymentHooks: PaymentHooks
    /// The customers' saved payment methods.
    public let paymentMethods: PaymentMethods
    /// Trips' chats; nil serves none.
    public let chat: ChatService?
    /// Relayed calls, phone numbers and proof uploads; without them those routes are not served.
    public var contact: ContactServices?
    let idempotency: IdempotencyMiddleware
    let liveStreams: TripLiveStreams
    /// Hears of every ops override (a direct assignment), for the server's log.
    let onOverride: @Sendable (OpsOverride) -> Void

    /// The API over `service` and `providers`; every collaborator is given (the composition root,
    /// `Backend`, builds them from one configuration).
    public init(
        service: TripService, auth: Authenticator, metrics: MetricsRegistry, providers: ProviderOperations,
        rateLimiter: RateLimiter, devices: NotificationsAPI, directory: any DirectoryRepository, openAPI: String,
        roads: (any RoadRouting)? = nil, paymentMethods: PaymentMethods, paymentHooks: PaymentHooks = PaymentHooks(),
        chat: ChatService? = nil,
        ready: @escaping @Sendable () -> Bool, onOverride: @escaping @Sendable (OpsOverride) -> Void
    ) {
        self.chat = chat
        self.directory = directory
        self.paymentHooks = paymentHooks
        self.roads = roads
        self.paymentMethods = paymentMethods
        self.service = service; self.auth = auth; self.metrics = metrics; self.openAPI = openAPI; self.ready = ready
        self.rateLimiter = rateLimiter; self.onOverride = onOverride; self.providers = providers; self.devices = devices
        self.wire = WireMapping(
            directory: service.directory, rating: { [weak service] in service?.averageRating(provider: $0) })
        self.liveStreams = TripLiveStreams(service: service, wire: wire)
        self.idempotency = IdempotencyMiddleware(service: service)
    }

    /// A router with every route registered.
    public func router() -> Router {
        var r = Router()
        addSystemRoutes(&r)
        addRideRoutes(&r)
        addOrderRoutes(&r)
        addProviderRoutes(&r)
        addMerchantRoutes(&r)
        addOpsRoutes(&r)
        addDirectoryRoutes(&r)
        addGuidanceRoutes(&r)
        addOSRMRoutes(&r)
        addMoneyRoutes(&r)
        addPaymentMethodRoutes(&r)
        if let chat { addChatRoutes(&r, chat) }
        addContactRoutes(&r); addUploadRoutes(&r)
        devices.register(into: &r)
        return r
    }

    /// Streams following trip `id` now (its SSE and WebSocket watchers).
    public func watcherCount(_ id: String) -> Int { liveStreams.watcherCount(id) }

    // MARK: - Shared by the route groups

    /// The trip if `account` may see it and it is of `kind`: rides and orders never answer for each other.
    func trip(_ id: String, _ account: Account, kind: TripKind) throws -> TripRecord {
        let trip = try map { try service.trip(id, for: account) }
        guard trip.kind == kind else { throw HTTPError.notFound() }
        return trip
    }

    /// `handler` under `kind`'s per-account limit; the account is the bearer token's.
    func limited(
        _ kind: RateLimitClass, _ handler: @escaping @Sendable (HTTPRequest) async throws -> HTTPResponse
    )
        -> @Sendable (HTTPRequest) async throws -> HTTPResponse
    {
        rateLimiter.limiting(kind, account: { [auth] in try? auth.account(for: $0).id }, handler)
    }

    /// A stored answer with the party-neutral snapshot, for provider, merchant and ops mutations.
    func snapshotRender() -> @Sendable (Result<TripRecord, TripError>) -> StoredResponse {
        { [wire] result in
            switch result {
            case .success(let trip): return APIErrors.stored(status: 200, json: wire.snapshot(trip))
            case .failure(let error): return APIErrors.stored(APIErrors.httpError(error) { wire.snapshot($0) })
            }
        }
    }

    func map<T>(_ body: () throws -> T) throws -> T { try APIErrors.map(wire, body) }

    func mapAsync<T>(
        _ body: () async throws -> T, refused view: ((TripRecord) -> TripSnapshot)? = nil
    ) async throws -> T {
        try await APIErrors.mapAsync(wire, body, refused: view)
    }

    /// The trip version an event id names: `7` or `7.12` (a fix after version 7).
    static func version(ofEventID id: String) -> Int? {
        Int(id.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
    }

    /// A required coordinate query parameter; 422 naming it when missing or out of range.
    static func coordinateQuery(
        _ req: HTTPRequest, _ name: String, range: ClosedRange<Double>
    ) throws(HTTPError) -> Double {
        guard let text = req.query[name], let value = Double(text), value.isFinite, range.contains(value) else {
            throw HTTPError.invalid(
                "/\(name)", "must be a number between \(Int(range.lowerBound)) and \(Int(range.upperBound))")
        }
        return value
    }
}
