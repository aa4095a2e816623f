public import EnRouteDomain
import Foundation
public import HTTPEngine
import EnRouteModels
import EnRouteCrypto

/// Ops handing a trip to a provider outside dispatch: who, which trip, to whom, and why.
public struct OpsOverride: Sendable, Equatable, CustomStringConvertible {
    public let opsId: String
    public let tripId: String
    public let providerId: String
    public let reason: String?
    public var description: String {
        "ops \(opsId) assigned trip \(tripId) to provider \(providerId)" + (reason.map { ": \($0)" } ?? " (no reason given)")
    }
}

/// The HTTP API of the trip service: every route of seeds 000, 002 and 004 over `TripService`.
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
    private let liveStreams: TripLiveStreams
    /// Hears of every ops override (a direct assignment), for the server's log.
    private let onOverride: @Sendable (OpsOverride) -> Void

    /// The API over `service`; without `providers`, an in-memory provider side on the continuous
    /// clock whose dispatch starts only when `providers.dispatcher.start()` is called. The standard
    /// rate limits apply on the continuous clock unless `rateLimiter` says otherwise.
    public init(service: TripService, auth: Authenticator, metrics: MetricsRegistry, openAPI: String = "",
                providers: ProviderOperations? = nil, rateLimiter: RateLimiter = RateLimiter(.standard, clock: ContinuousClock()),
                ready: @escaping @Sendable () -> Bool = { true }, onOverride: @escaping @Sendable (OpsOverride) -> Void = { _ in }) {
        self.service = service; self.auth = auth; self.metrics = metrics; self.openAPI = openAPI; self.ready = ready
        self.rateLimiter = rateLimiter; self.onOverride = onOverride
        self.wire = WireMapping(directory: service.directory)
        self.liveStreams = TripLiveStreams(service: service, wire: wire)
        self.providers = providers ?? ProviderOperations(service: service, metrics: metrics, clock: ContinuousClock())
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
        return r
    }

    // MARK: - System

    private func addSystemRoutes(_ r: inout Router) {
        r.add("GET", "/healthz", .sync { _ in .jsonBytes(Array(#"{"status":"ok"}"#.utf8)) })
        r.add("GET", "/readyz", .sync { [ready] _ in
            ready() ? .jsonBytes(Array(#"{"status":"ready"}"#.utf8))
                : HTTPError.unavailable(retryAfterSeconds: 1, detail: "The store is not reachable.").response
        })
        r.add("GET", "/metrics", .sync { [metrics] _ in
            .text(metrics.render(), contentType: "text/plain; version=0.0.4; charset=utf-8")
        })
        r.add("GET", "/openapi.yaml", .sync { [openAPI] _ in .text(openAPI, contentType: "application/yaml") })
    }

    // MARK: - Rides (seed 002)

    private func addRideRoutes(_ r: inout Router) {
        r.post("/v1/estimates", limited(.estimates) { req in
            _ = try auth.account(for: req)
            let body = try req.decode(EstimateRequest.self)
            try map { try TripService.validate(body.pickup, "/pickup"); try TripService.validate(body.dropoff, "/dropoff") }
            return try .json(service.estimator.estimates(pickup: body.pickup, dropoff: body.dropoff))
        })
        r.get("/v1/drivers/nearby") { req in
            _ = try auth.account(for: req)
            let center = Coordinate(lat: try Self.coordinateQuery(req, "lat", range: -90...90), lng: try Self.coordinateQuery(req, "lng", range: -180...180))
            return try .json(providers.nearby(center))
        }
        r.post("/v1/trips", limited(.creates) { req in
            let account = try auth.account(for: req, roles: [.customer])
            let body = try req.decode(TripRequest.self)
            return try await idempotent(req, account, required: true, render: rideRender(created: true)) { ctx in
                try await service.requestRide(body, by: account, idempotency: ctx)
            }
        })
        r.get("/v1/trips/active") { req in
            let account = try auth.account(for: req, roles: [.customer])
            guard let trip = service.activeTrips(customer: account.id).first(where: { $0.kind == .ride }) else { return .empty(204) }
            return try .json(wire.ride(trip, now: service.currentTime()))
        }
        r.get("/v1/trips/{id}") { req in
            let account = try auth.account(for: req)
            let trip = try ride(req.parameter("id"), account)
            // Seed 002's live channel connects its WebSocket to the trip itself; the same stream as /events.
            if req.isWebSocketUpgrade { return liveStreams.stream(req, tripId: trip.id) }
            return try .json(wire.ride(trip, now: service.currentTime()))
        }
        addCancelAndEvents(&r, kind: .ride, prefix: "/v1/trips", render: rideRender(created: false),
                           defaultReason: "cancelled by the rider")
    }

    private func ride(_ id: String, _ account: Account) throws -> TripRecord { try trip(id, account, kind: .ride) }

    /// The trip if `account` may see it and it is of `kind`: rides and orders never answer for each other.
    private func trip(_ id: String, _ account: Account, kind: TripKind) throws -> TripRecord {
        let trip = try map { try service.trip(id, for: account) }
        guard trip.kind == kind else { throw HTTPError.notFound() }
        return trip
    }

    /// `POST {prefix}/{id}/cancel` and the live stream `GET {prefix}/{id}/events`, alike for rides and orders.
    private func addCancelAndEvents(_ r: inout Router, kind: TripKind, prefix: String,
                                    render: @escaping @Sendable (Result<TripRecord, TripError>) -> StoredResponse,
                                    defaultReason: String) {
        r.post("\(prefix)/{id}/cancel", limited(.steps) { req in
            let account = try auth.account(for: req, roles: [.customer, .ops])
            let id = try req.parameter("id")
            let reason = req.body.isEmpty ? nil : try req.decode(CancelRequest.self).reason
            _ = try trip(id, account, kind: kind)
            return try await idempotent(req, account, required: false, render: render) { ctx in
                try await service.move(id, .cancel(reason: reason ?? defaultReason), by: account, idempotency: ctx)
            }
        })
        r.get("\(prefix)/{id}/events") { req in
            let account = try auth.account(for: req)
            let id = try req.parameter("id")
            let current = try trip(id, account, kind: kind)
            // A browser's EventSource reconnects after every close; once it has the final state, 204
            // tells it to stop (HTML's SSE processing model) instead of replaying the end forever.
            if !current.status.isActive, !req.isWebSocketUpgrade,
               let last = req.headers["Last-Event-ID"], let seen = Self.version(ofEventID: last), seen >= current.version {
                return .empty(204)
            }
            return liveStreams.stream(req, tripId: id)
        }
    }

    private func rideRender(created: Bool) -> @Sendable (Result<TripRecord, TripError>) -> StoredResponse {
        { [wire, service] result in
            switch result {
            case .success(let trip):
                return Self.stored(status: created ? 201 : 200, json: wire.ride(trip, now: service.currentTime()))
            case .failure(let error):
                return Self.stored(Self.httpError(error) { wire.ride($0, now: service.currentTime()) })
            }
        }
    }

    // MARK: - Orders (seed 000)

    private func addOrderRoutes(_ r: inout Router) {
        r.post("/v1/orders", limited(.creates) { req in
            let account = try auth.account(for: req, roles: [.customer])
            let body = try req.decode(PlaceOrderRequest.self)
            return try await idempotent(req, account, required: true, render: orderRender(status: 201)) { ctx in
                try await service.placeOrder(body, by: account, idempotency: ctx)
            }
        })
        r.get("/v1/orders/active") { req in
            let account = try auth.account(for: req, roles: [.customer])
            let now = service.currentTime()
            let orders = service.activeTrips(customer: account.id).filter { $0.kind == .delivery }.map { wire.tracking($0, now: now) }
            return try .json(ActiveOrdersDTO(orders: orders))
        }
        // The hot read path: answered from memory on the engine's thread, without a task hop.
        r.add("GET", "/v1/orders/{id}/tracking", .sync { req in
            let account = try auth.account(for: req)
            let trip = try order(req.parameter("id"), account)
            return .jsonBytes(TrackingJSON.encode(wire.tracking(trip, now: service.currentTime())))
        })
        r.put("/v1/orders/{id}/live-activity-token", limited(.steps) { req in
            let account = try auth.account(for: req, roles: [.customer])
            let id = try req.parameter("id")
            let body = try req.decode(LiveActivityTokenRequest.self)
            _ = try order(id, account)
            try await mapAsync { try await service.setLiveActivityToken(body.token, order: id, by: account) }
            return .empty(204)
        })
        addCancelAndEvents(&r, kind: .delivery, prefix: "/v1/orders", render: orderRender(status: 200),
                           defaultReason: "Cancelled by you")
    }

    private func order(_ id: String, _ account: Account) throws -> TripRecord { try trip(id, account, kind: .delivery) }

    private func orderRender(status: Int) -> @Sendable (Result<TripRecord, TripError>) -> StoredResponse {
        { [wire, service] result in
            switch result {
            case .success(let trip):
                return StoredResponse(status: status, contentType: "application/json",
                                      body: TrackingJSON.encode(wire.tracking(trip, now: service.currentTime())))
            case .failure(let error):
                return Self.stored(Self.httpError(error) { wire.tracking($0, now: service.currentTime()) })
            }
        }
    }

    // MARK: - Live streams (SSE and WebSocket on the same path)

    /// The trip version an event id names: `7` or `7.12` (a fix after version 7).
    static func version(ofEventID id: String) -> Int? {
        Int(id.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
    }

    /// Streams following trip `id` now (its SSE and WebSocket watchers).
    public func watcherCount(_ id: String) -> Int { liveStreams.watcherCount(id) }

    // MARK: - Providers (seed 004)

    private func addProviderRoutes(_ r: inout Router) {
        r.post("/v1/provider/trips/{id}/accept", limited(.steps) { req in
            let account = try auth.account(for: req, roles: [.provider])
            let id = try req.parameter("id")
            switch providers.dispatcher.tripAccept(id, by: account.id) {
            case .offer(let offerId):
                return try await acceptOffer(offerId, account)
            case .notOffered:
                // A retried accept of a trip this provider already holds answers as the first did.
                if let held = try map({ try service.cached(id) }), held.providerId == account.id, held.status.isActive {
                    return try .json(wire.snapshot(held))
                }
                // Never offered to this provider (or the offer is over): the trip is not theirs to see.
                throw HTTPError.notFound("No offer of this trip is open for you.")
            }
        })
        r.post("/v1/provider/availability", limited(.steps) { req in
            let account = try auth.account(for: req, roles: [.provider])
            let body = try req.decode(AvailabilityRequest.self)
            if let position = body.position { try map { try TripService.validate(position, "/position") } }
            return try .json(providers.setAvailability(body, provider: account.id))
        })
        r.get("/v1/provider/events") { req in
            let account = try auth.account(for: req, roles: [.provider])
            return providerStream(req, provider: account.id)
        }
        r.post("/v1/provider/offers/{offerId}/accept", limited(.steps) { req in
            let account = try auth.account(for: req, roles: [.provider])
            return try await acceptOffer(try req.parameter("offerId"), account)
        })
        r.post("/v1/provider/offers/{offerId}/decline", limited(.steps) { req in
            let account = try auth.account(for: req, roles: [.provider])
            let offerId = try req.parameter("offerId")
            do { try providers.dispatcher.decline(offerId: offerId, by: account.id) } catch is OfferNotFound { throw HTTPError.notFound("No such offer.") }
            return .empty(204)
        })
        r.post("/v1/provider/trips/{id}/steps", limited(.steps) { req in
            let account = try auth.account(for: req, roles: [.provider])
            let id = try req.parameter("id")
            let body = try req.decode(StepRequest.self)
            guard !body.changeId.isEmpty, body.changeId.count <= 128 else { throw HTTPError.invalid("/changeId", "must be 1 to 128 characters") }
            if let position = body.position { try map { try TripService.validate(position, "/position") } }
            let current = try map { try service.trip(id, for: account) }
            let move = try Self.providerStep(body.step, kind: current.kind)
            let trip = try await mapAsync {
                try await service.move(id, move, by: account, deviceTime: body.deviceTime, changeId: body.changeId)
            } refused: { wire.snapshot($0) }
            return try .json(wire.snapshot(trip))
        })
        r.get("/v1/provider/trips/active") { req in
            let account = try auth.account(for: req, roles: [.provider])
            return try .json(TripSnapshotList(trips: service.activeTrips(provider: account.id).map(wire.snapshot)))
        }
        r.post("/v1/provider/locations", limited(.locations) { req in
            let account = try auth.account(for: req, roles: [.provider])
            let body = try req.decode(LocationBatch.self)
            guard !body.batchId.isEmpty else { throw HTTPError.invalid("/batchId", "must not be empty") }
            guard body.fixes.count <= 100 else { throw HTTPError.invalid("/fixes", "at most 100 fixes per batch") }
            for (i, fix) in body.fixes.enumerated() {
                try map { try TripService.validate(fix.coordinate, "/fixes/\(i)") }
                guard fix.accuracy >= 0, fix.accuracy.isFinite else { throw HTTPError.invalid("/fixes/\(i)/accuracy", "must be a non-negative number") }
            }
            do {
                return try .json(try await providers.ingest.ingest(body, provider: account.id))
            } catch {
                throw HTTPError.unavailable(retryAfterSeconds: 1, detail: "The batch could not be stored; send it again with the same batchId.")
            }
        })
    }

    /// Accepts an offer now: 200 with the trip, 409 with the real trip when it is over, 404 when it was never the caller's.
    private func acceptOffer(_ offerId: String, _ account: Account) async throws -> HTTPResponse {
        do {
            return try .json(wire.snapshot(try await providers.dispatcher.accept(offerId: offerId, by: account.id)))
        } catch is OfferNotFound {
            throw HTTPError.notFound("No such offer.")
        } catch let error as TripError {
            throw Self.httpError(error) { wire.snapshot($0) }
        }
    }

    /// A provider's live stream: the live offer and active trips first, then offers, withdrawals and
    /// trip changes until the client leaves. SSE, or WebSocket on the same path.
    private func providerStream(_ req: HTTPRequest, provider: String) -> HTTPResponse {
        let providers = self.providers
        return .live(req) { emit in
            let updates = providers.events.subscribe(provider)
            for event in providers.resync(provider: provider) { try emit(LiveEvent(name: event.name, id: event.id, data: event.data)) }
            for await event in updates { try emit(LiveEvent(name: event.name, id: event.id, data: event.data)) }
        }
    }

    /// A required coordinate query parameter; 422 naming it when missing or out of range.
    static func coordinateQuery(_ req: HTTPRequest, _ name: String, range: ClosedRange<Double>) throws(HTTPError) -> Double {
        guard let text = req.query[name], let value = Double(text), value.isFinite, range.contains(value) else {
            throw HTTPError.invalid("/\(name)", "must be a number between \(Int(range.lowerBound)) and \(Int(range.upperBound))")
        }
        return value
    }

    static func providerStep(_ step: String, kind: TripKind) throws(HTTPError) -> TripMove {
        switch (kind, step) {
        case (.ride, "driverArrived"): return .ride(.driverArrived)
        case (.ride, "onTrip"): return .ride(.onTrip)
        case (.ride, "completed"): return .ride(.completed)
        case (.delivery, "onTheWay"): return .delivery(.onTheWay)
        case (.delivery, "arriving"): return .delivery(.arriving)
        case (.delivery, "delivered"): return .delivery(.delivered)
        case (_, "cancelled"): return .cancel(reason: "The provider gave up the trip")
        case (.ride, _): throw HTTPError.invalid("/step", "must be driverArrived, onTrip, completed or cancelled for a ride")
        case (.delivery, _): throw HTTPError.invalid("/step", "must be onTheWay, arriving, delivered or cancelled for a delivery")
        }
    }

    private func snapshotRender() -> @Sendable (Result<TripRecord, TripError>) -> StoredResponse {
        { [wire] result in
            switch result {
            case .success(let trip): return Self.stored(status: 200, json: wire.snapshot(trip))
            case .failure(let error): return Self.stored(Self.httpError(error) { wire.snapshot($0) })
            }
        }
    }

    // MARK: - Merchants

    private func addMerchantRoutes(_ r: inout Router) {
        r.post("/v1/merchant/orders/{id}/accept", limited(.steps) { req in
            let account = try auth.account(for: req, roles: [.merchant])
            let id = try req.parameter("id")
            let body = try req.decode(MerchantAcceptRequest.self)
            guard (1...240).contains(body.preparationMinutes) else { throw HTTPError.invalid("/preparationMinutes", "must be between 1 and 240") }
            return try await idempotent(req, account, required: false, render: snapshotRender()) { ctx in
                try await service.move(id, .merchantAccept(preparationMinutes: body.preparationMinutes), by: account, idempotency: ctx)
            }
        })
        r.post("/v1/merchant/orders/{id}/ready", limited(.steps) { req in
            let account = try auth.account(for: req, roles: [.merchant])
            let id = try req.parameter("id")
            return try await idempotent(req, account, required: false, render: snapshotRender()) { ctx in
                try await service.move(id, .merchantReady, by: account, idempotency: ctx)
            }
        })
        r.get("/v1/merchant/orders") { req in
            let account = try auth.account(for: req, roles: [.merchant])
            let page = try ListPage(req.query, defaultLimit: 50)
            return try .json(ListPage.list(service.store.trips(.merchantActive(merchantId: account.id), after: page.cursor, limit: page.limit), wire))
        }
    }

    // MARK: - Ops

    private func addOpsRoutes(_ r: inout Router) {
        r.get("/v1/ops/trips") { req in
            _ = try auth.account(for: req, roles: [.ops])
            let state = req.query["state"].flatMap { $0.isEmpty ? nil : $0 }
            if let state, TripState(rawValue: state) == nil, DeliveryStatus(rawValue: state) == nil {
                throw HTTPError.invalid("/state", "is not a trip state")
            }
            let page = try ListPage(req.query, defaultLimit: ListPage.maxLimit)
            return try .json(ListPage.list(service.store.trips(.all(status: state), after: page.cursor, limit: page.limit), wire))
        }
        // The ops override of dispatch: hands a waiting trip to a provider, in the change log as ops.
        r.post("/v1/ops/trips/{id}/assign", limited(.steps) { req in
            let account = try auth.account(for: req, roles: [.ops])
            let id = try req.parameter("id")
            let body = try req.decode(AssignRequest.self)
            let provider = body.providerId.trimmingCharacters(in: .whitespaces)
            guard !provider.isEmpty, provider.count <= 128 else { throw HTTPError.invalid("/providerId", "must be 1 to 128 characters") }
            return try await idempotent(req, account, required: false, render: snapshotRender()) { ctx in
                let trip = try await service.move(id, .assignProvider(provider), by: account, idempotency: ctx)
                overrides(OpsOverride(opsId: account.id, tripId: id, providerId: provider, reason: body.reason))
                return trip
            }
        })
        r.post("/v1/ops/trips/{id}/problem", limited(.steps) { req in
            let account = try auth.account(for: req, roles: [.ops])
            let id = try req.parameter("id")
            let body = try req.decode(ProblemReport.self)
            let move: TripMove = body.message.map { .reportProblem($0) } ?? .clearProblem
            return try await idempotent(req, account, required: false, render: snapshotRender()) { ctx in
                try await service.move(id, move, by: account, idempotency: ctx)
            }
        })
    }

    // MARK: - Rate limits

    /// `handler` under `kind`'s per-account limit; the account is the bearer token's.
    private func limited(_ kind: RateLimitClass, _ handler: @escaping @Sendable (HTTPRequest) async throws -> HTTPResponse)
        -> @Sendable (HTTPRequest) async throws -> HTTPResponse {
        rateLimiter.limiting(kind, account: { [auth] in try? auth.account(for: $0).id }, handler)
    }

    private func overrides(_ override: OpsOverride) {
        metrics.increment("enroute_ops_overrides_total", labels: ["kind": "assign"], help: "Trips ops assigned outside dispatch.")
        onOverride(override)
    }

    // MARK: - Idempotency and errors

    /// Runs a mutation under its `Idempotency-Key` (protocols.md §7.3): replays a stored answer,
    /// 409 while the first is running, 422 for the same key with another body; 400 when required and missing.
    private func idempotent(_ req: HTTPRequest, _ account: Account, required: Bool,
                            render: @escaping @Sendable (Result<TripRecord, TripError>) -> StoredResponse,
                            _ operation: (IdempotencyContext?) async throws -> TripRecord) async throws -> HTTPResponse {
        guard let raw = req.headers["Idempotency-Key"] else {
            if required { throw HTTPError(status: 400, title: "Bad Request", detail: "This request needs an Idempotency-Key header (a UUID).") }
            do {
                return Self.response(render(.success(try await operation(nil))))
            } catch let error as TripError {
                return Self.response(render(.failure(error)))
            }
        }
        let key = raw.trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
        guard (8...255).contains(key.count), key.allSatisfy({ $0.isASCII && !$0.isWhitespace }) else {
            throw HTTPError.badRequest("The Idempotency-Key must be 8 to 255 visible ASCII characters, such as a UUID.")
        }
        let scope = IdempotencyScope(accountId: account.id, method: req.method, path: req.path, key: key.lowercased())
        let context = IdempotencyContext(scope: scope, fingerprint: Self.fingerprint(req.body), render: render)
        switch try await service.claim(context) {
        case .replay(let stored):
            var response = Self.response(stored)
            response.headers.add("Idempotent-Replayed", "true")
            return response
        case .inFlight:
            throw HTTPError(status: 409, title: "Conflict", detail: "A request with this Idempotency-Key is still being processed; retry shortly.")
        case .mismatch:
            throw HTTPError(status: 422, title: "Unprocessable Content", detail: "This Idempotency-Key was used with a different request body.")
        case .proceed:
            do {
                return Self.response(render(.success(try await operation(context))))
            } catch let error as TripError {
                switch error {
                case .refused, .alreadyActive:
                    return Self.response(render(.failure(error)))   // stored with the move's transaction
                default:
                    await service.release(context)
                    throw Self.httpError(error) { _ in "" }
                }
            } catch {
                await service.release(context)
                throw error
            }
        }
    }

    /// The fingerprint an idempotency key remembers of a request body: its SHA-256, hex.
    public static func fingerprint(_ body: [UInt8]) -> String {
        Digest.sha256(body).map { String(format: "%02x", $0) }.joined()
    }

    /// The HTTP error for a trip error; a 409 carries the real trip in the trip's wire shape.
    static func httpError<T: Codable & Sendable & Equatable>(_ error: TripError, _ view: (TripRecord) -> T) -> HTTPError {
        switch error {
        case .notFound:
            return .notFound("No such trip.")
        case .forbidden(let detail):
            return .forbidden(detail)
        case .invalid(let pointer, let detail):
            return .invalid(pointer, detail)
        case .refused(let refusal, let trip):
            var e = HTTPError(status: 409, title: "Conflict", detail: refusal.reason)
            e.body = (try? WireCoding.encoder().encode(ConflictProblem(detail: refusal.reason, trip: view(trip)))).map(Array.init)
            e.headers.set("Content-Type", "application/problem+json")
            return e
        case .alreadyActive(let trip):
            let detail = "You already have an active trip; finish or cancel it first."
            var e = HTTPError(status: 409, title: "Conflict", detail: detail)
            e.body = (try? WireCoding.encoder().encode(ConflictProblem(detail: detail, trip: view(trip), type: "https://enroute.invalid/problems/already-active"))).map(Array.init)
            return e
        }
    }

    private func map<T>(_ body: () throws -> T) throws -> T {
        do { return try body() } catch let error as TripError { throw Self.httpError(error) { wire.snapshot($0) } }
    }

    private func mapAsync<T>(_ body: () async throws -> T, refused view: ((TripRecord) -> TripSnapshot)? = nil) async throws -> T {
        do { return try await body() } catch let error as TripError { throw Self.httpError(error) { (view ?? wire.snapshot)($0) } }
    }

    static func stored(status: Int, json: some Encodable) -> StoredResponse {
        StoredResponse(status: status, contentType: "application/json", body: (try? WireCoding.encoder().encode(json)).map(Array.init) ?? [])
    }

    static func stored(_ error: HTTPError) -> StoredResponse {
        let response = error.response
        return StoredResponse(status: response.status, contentType: response.headers["Content-Type"] ?? "application/problem+json", body: response.bodyBytes)
    }

    static func response(_ stored: StoredResponse) -> HTTPResponse {
        var headers = HTTPHeaders()
        headers.add("Content-Type", stored.contentType)
        headers.add("Cache-Control", "no-store")
        return HTTPResponse(status: stored.status, headers: headers, body: .bytes(stored.body))
    }
}
