public import Foundation
public import EnRouteModels
public import EnRouteNotifications
import EnRouteAPNs
public import EnRouteLogging
public import EnRouteDomain
public import EnRouteAPI
public import HTTPEngine

/// A backend with dispatch and the offer push planner on a manual clock: provider p1 goes online
/// near the pickup, a customer asks for a ride, and dispatch offers it to p1.
public struct OfferFlow: Sendable {
    public let backend: TestBackend
    public let providers: ProviderOperations
    public let devices: any DeviceRepository
    public let ledger: any NotificationLedger
    public let metrics: MetricsRegistry
    public let router: Router
    public let provider = "p1"

    public static let pickup = Coordinate(lat: 60.1699, lng: 24.9384)
    public static let pickupJSON = #"{"lat":60.1699,"lng":24.9384}"#
    public static let dropoffJSON = #"{"lat":60.1841,"lng":24.9497}"#

    /// The production backend with dispatch started; pushes go to `push`.
    public init(push: any PushGateway = LogPushGateway(log: .discard)) throws {
        backend = TestBackend(offerIDPrefix: "OF", jitterSeed: 7, push: push)
        providers = backend.providers
        devices = backend.backend.devices
        ledger = backend.backend.ledger
        metrics = backend.metrics
        router = backend.router
        try providers.dispatcher.start()
    }

    public var clock: ManualClock { backend.clock }

    /// A sender over this backend's outbox that asks dispatch whether an offer is still open, unless told otherwise.
    public func sender(
        gateway: any PushGateway, pollClock: (any Clock<Duration>)? = nil,
        offerIsOpen: (@Sendable (String, String) -> Bool)? = nil
    ) -> PushSender {
        let clock = self.clock, dispatcher = providers.dispatcher
        return PushSender(
            store: backend.store, devices: devices, ledger: ledger, gateway: gateway, clock: pollClock ?? clock,
            now: { clock.date }, metrics: metrics,
            offerIsOpen: offerIsOpen ?? { offerId, provider in
                dispatcher.liveOffer(heldBy: provider)?.offerId == offerId
            })
    }

    /// Registers `token` for the provider through the API, as the provider's app does at launch.
    public func registerDevice(_ token: String, environment: String = "sandbox") async throws {
        let r = await call(
            "PUT", "/v1/devices/\(token)", as: provider, .provider,
            json: #"{"platform":"ios","environment":"\#(environment)","appVersion":"4.2.0"}"#)
        guard r.status == 204 else {
            throw Failure("register: \(r.status) \(String(decoding: r.body, as: UTF8.self))")
        }
    }

    /// p1 goes online, a ride is requested, and the offer p1's live stream carries is returned once
    /// dispatch has finished making it (its timer is running).
    public func offer() async throws -> Offer {
        var events = providers.events.subscribe(provider).makeAsyncIterator()
        _ = try await providers.setAvailability(
            AvailabilityRequest(online: true, position: Coordinate(lat: Self.pickup.lat + 0.002, lng: Self.pickup.lng)),
            provider: provider)
        let body = try await backend.rideBody("c1", pickup: Self.pickupJSON, dropoff: Self.dropoffJSON)
        let ride = await call(
            "POST", "/v1/trips", as: "c1", .customer, json: body, headers: ["Idempotency-Key": UUID().uuidString])
        guard ride.status == 201 else {
            throw Failure("request ride: \(ride.status) \(String(decoding: ride.body, as: UTF8.self))")
        }
        while let event = await events.next() {
            guard event.name == "offer" else { continue }
            let offer = try WireCoding.decoder().decode(Offer.self, from: Data(event.data))
            await clock.sleepers(atLeast: 1)
            return offer
        }
        throw OfferFlowFailure.noOffer
    }

    /// Every message waiting in the push outbox.
    public func outbox() async throws -> [OutboxMessage] {
        try await backend.store.dueOutbox(topic: PushJob.topic, now: .distantFuture, limit: 100)
    }

    /// Sends a request through the router as `account`.
    public func call(
        _ method: String, _ path: String, as account: String, _ role: Party, json: String? = nil,
        headers: [String: String] = [:]
    ) async -> (status: Int, body: [UInt8]) {
        var h = HTTPHeaders(headers.map { ($0.key, $0.value) })
        h.add("Authorization", "Bearer \(backend.token(account, role))")
        if json != nil { h.add("Content-Type", "application/json") }
        let response = await router.respond(
            to: HTTPRequest(method: method, path: path, headers: h, body: Array((json ?? "").utf8)))
        return (response.status, response.bodyBytes)
    }

    public enum OfferFlowFailure: Error { case noOffer }
}
