import Foundation
public import EnRouteDomain
import EnRouteSandbox
public import EnRouteAPI
public import EnRouteNotifications
public import HTTPEngine
import EnRouteSQLite
import EnRoutePostgres
import EnRouteStores
import EnRouteModels
import Synchronization
public import EnRouteWeb

/// The composition root: the whole backend wired from one configuration and one set of effects.
/// `enroute serve`, the in-process test backend and the benchmarks all build this, so tests exercise
/// the production wiring.
public final class Backend: Sendable {
    public let configuration: BackendConfiguration
    public let effects: BackendEffects
    public let store: any TripStore
    public let paths: any PathStore
    public let devices: any DeviceRepository
    public let ledger: any NotificationLedger
    /// Merchants and provider profiles, in the same storage as the trips.
    public let directory: any DirectoryRepository
    public let service: TripService
    /// The delivery pushes and Live Activity updates each order change plans.
    public let orderPushes: OrderPushPlanner
    /// The reminders each change of a trip booked ahead plans for its customer.
    public let bookingPushes: BookingPushPlanner
    public let providers: ProviderOperations
    public let sender: PushSender
    public let metrics: MetricsRegistry
    public let auth: Authenticator
    public let api: EnRouteAPI
    public let router: Router
    /// The schema version of the SQLite file, nil in memory.
    public let schemaVersion: Int?
    /// The road estimator when a road network is configured (nil: straight lines).
    public let roadEstimator: RoadEstimator?
    /// Where completed legs of the ETA error model are kept.
    public let etaSamples: any EtaSampleStore
    /// The customers' saved payment methods, in the same storage as the trips.
    public let paymentMethodStore: any PaymentMethodStore
    /// Saving, listing and choosing payment methods, checked with `effects.payments`.
    public let paymentMethods: PaymentMethods
    /// Quotes, holds and charges.
    public let payments: TripPayments
    /// Settles ended trips, charges tips and applies the gateway's callbacks.
    public let paymentWorker: PaymentWorker
    /// The share page, the ops console and the road map.
    public let web: WebSurfaces
    /// The offers and pushes the console shows per trip.
    public let journal: OpsJournal
    /// Trips' chats: messages, live sockets, pushes to whoever has none open, removal after the end.
    public let chat: ChatService
    /// Relayed calls: one relay session per trip, closed a stated time after it ends.
    public let calls: TripCalls
    /// Proof-of-delivery uploads.
    public let proofs: ProofUploads
    /// This node's part in the fan-out between nodes, when it is one of several (`BackendEffects.liveBus`).
    public let fanOut: FanOut?
    /// Where offers live: in memory, or in the store every node shares.
    public let offerStore: any OfferStore
    /// Supply and demand by zone, counted every minute: what a quote's busy-time multiplier reads.
    public let zones: ZoneSampler
    private let tasks = Mutex<[Task<Void, Never>]>([])
    /// Closes the database connections (PostgreSQL's pool); a no-op for memory and SQLite.
    private let closeStorage: @Sendable () -> Void

    /// Builds every part; nothing runs until `start()`. Throws `BackendSetupError` for nodes sharing a live bus but
    /// not the provider locations (each would find only the providers that went online on it).
    public init(_ configuration: BackendConfiguration, effects: BackendEffects) throws {
        if effects.liveBus != nil && effects.providerLocations == nil {
            throw BackendSetupError(
                "nodes sharing a live bus must share the provider locations too (BackendEffects.providerLocations)")
        }
        self.configuration = configuration
        self.effects = effects
        let now = effects.now, log = effects.log
        let stores = try Self.openStores(configuration, now: now)
        store = stores.trips; paths = stores.paths; devices = stores.devices; ledger = stores.ledger
        directory = stores.directory; etaSamples = stores.etaSamples; paymentMethodStore = stores.paymentMethods
        offerStore = stores.offers; schemaVersion = stores.schemaVersion; closeStorage = stores.close
        journal = OpsJournal(now: now)
        let metrics = MetricsRegistry()
        self.metrics = metrics
        orderPushes = OrderPushPlanner(directory: stores.directory)
        bookingPushes = BookingPushPlanner(timeZone: configuration.timeZone)
        roadEstimator = effects.roads.map {
            RoadEstimator(
                roads: $0, samples: stores.etaSamples, timeZone: configuration.timeZone, metrics: metrics, log: log)
        }
        let estimator: any TripEstimator = roadEstimator ?? StraightLineEstimator()
        payments = Self.makePayments(stores, estimator: estimator, configuration, effects)
        service = TripService(
            store: store, directory: directory, estimator: estimator, ids: effects.tripIDs,
            observers: [orderPushes, bookingPushes], endedCacheLimit: configuration.endedTripCache, payments: payments,
            cities: configuration.cities, node: effects.liveBus == nil ? nil : configuration.node, now: now)
        fanOut = effects.liveBus.map { [service] bus in
            FanOut(
                node: configuration.node, service: service, bus: bus, cities: configuration.cities.names,
                clock: effects.clock, log: log)
        }
        paymentWorker = PaymentWorker(
            service: service, measurement: PathMeasurement(paths: paths, hasRoads: effects.roads != nil),
            clock: effects.clock, now: now, log: log)
        // Dispatch hands each offer to the planner, whose new job wakes the sender, which asks dispatch
        // whether the offer is still open when it sends. The planner holds the sender weakly, so the
        // cycle is broken and a backend is released as a whole.
        let lateSender = WeakBox<PushSender>()
        let pushes = PushQueue(store: store, devices: devices, now: now, queued: { lateSender.value?.wake() }, log: log)
        providers = Self.makeProviders(
            service, stores, offers: journal.observing(OfferPushPlanner(queue: pushes)), metrics: metrics,
            peers: fanOut, configuration, effects)
        zones = ZoneSampler(metrics: metrics) { [providers] in try await providers.zoneCounts() }
        let dispatcher = providers.dispatcher
        sender = PushSender(
            store: store, devices: devices, ledger: ledger, gateway: journal.recording(effects.push),
            clock: effects.clock, now: now, metrics: metrics,
            offerIsOpen: { offerId, provider in dispatcher.liveOffer(heldBy: provider)?.offerId == offerId },
            log: log)
        lateSender.value = sender
        chat = ChatService(
            store: stores.chat, trips: service, policy: configuration.chat, notifier: ChatPushPlanner(queue: pushes),
            clock: effects.clock, now: now, log: log)
        auth = Authenticator(
            secret: configuration.secret, previousSecrets: configuration.previousSecrets,
            leeway: configuration.tokenLeeway, now: now)
        paymentMethods = PaymentMethods(
            store: paymentMethodStore, gateway: effects.payments, ids: effects.paymentMethodIDs, now: now)
        calls = TripCalls(
            service: service,
            relay: effects.telephony ?? LogTelephonyRelay(pool: LogTelephonyRelay.defaultPool, log: log),
            sessions: stores.contactSessions, phones: stores.phones, policy: configuration.calls,
            clock: effects.clock, now: now, log: log)
        proofs = ProofUploads(
            service: service, uploads: stores.proofUploads, blobs: stores.blobs, ids: effects.uploadIDs, now: now,
            sha256: EnRouteAPI.sha256Hex)
        api = Self.makeAPI(
            service: service, auth: auth, metrics: metrics, providers: providers, stores: stores,
            paymentMethods: paymentMethods, worker: paymentWorker, chat: chat,
            contact: ContactServices(calls: calls, phones: stores.phones, proofs: proofs), configuration, effects)
        web = WebSurfaces(
            service: service, providers: providers, paths: paths, auth: auth, wire: api.wire,
            secret: configuration.secret, links: stores.shareLinks, journal: journal, roadMap: effects.roadMap,
            clock: effects.clock, configuration: configuration.web)
        var router = api.router()
        web.register(into: &router)
        self.router = router
        connect()
    }

    /// Writes `content`'s merchants and provider profiles into the directory now (creating or replacing
    /// each), before serving: how tests and benchmarks give the backend its parties.
    public func seed(_ content: StaticDirectory) throws { try directory.seed(content) }

    /// Loads the active trips (releasing idempotency keys a crash left unanswered), then starts dispatch
    /// (trips still waiting are searched for again), the push sender and the hourly idempotency purge.
    /// Returns how many keys were released.
    @discardableResult
    public func start() async throws -> Int {
        let released = try await service.warm()
        fanOut?.start()
        try providers.dispatcher.start()
        let sender = self.sender, store = self.store, clock = effects.clock, now = effects.now
        let retention = service.idempotencyRetention
        let roadSpeeds = effects.roadSpeeds
        let worker = paymentWorker, chat = self.chat, service = self.service,
            sandbox = effects.payments as? SandboxGateway
        let quoteStore = payments.quotes.store, offerStore = self.offerStore
        let calls = self.calls, proofs = self.proofs, zones = self.zones
        tasks.withLock {
            $0.append(Task { await zones.run(clock: clock) })
            $0.append(Task { await sender.run() })
            $0.append(Task { await calls.run() })
            $0.append(Task { await worker.run() })
            $0.append(Task { await chat.run() })
            // The sandbox's callbacks reach the backend as a real gateway's webhooks do: queued, then applied by the
            // worker.
            if let sandbox {
                $0.append(
                    Task { [weak service] in
                        for await event in sandbox.events {
                            if (try? await service?.enqueuePaymentJob(.event(event))) == true { worker.wake() }
                        }
                    })
            }
            if let roadSpeeds { $0.append(Task { await roadSpeeds.run(clock: clock, now: now) }) }
            $0.append(
                Task {
                    while !Task.isCancelled {
                        try? await store.purgeIdempotency(before: now().addingTimeInterval(-retention))
                        try? await quoteStore.purge(expiredBefore: now().addingTimeInterval(-30 * 86_400))
                        try? await offerStore.purge(endedBefore: now().addingTimeInterval(-86_400))
                        // A proof upload not finished within a day was abandoned: its bytes go.
                        try? await proofs.purgeAbandoned(createdBefore: now().addingTimeInterval(-86_400))
                        try? await clock.sleep(for: .seconds(3600))
                    }
                })
        }
        return released
    }

    /// Waits for the road work started so far (route recomputes, calibration writes, path matching) to finish.
    public func settleRoads() async { await roadEstimator?.settle() }

    deinit { closeStorage() }

    /// Stops dispatch and the background tasks and waits for them to end.
    public func stop() async {
        providers.dispatcher.stop()
        fanOut?.stop()
        let running = tasks.withLock { t in
            defer { t = [] }; return t
        }
        for task in running { task.cancel() }
        for task in running { await task.value }
    }
}

extension Backend {
    /// The gateway's callbacks and, with the sandbox, its challenge page.
    static func hooks(effects: BackendEffects, worker: PaymentWorker) -> PaymentHooks {
        let sandbox = effects.payments as? SandboxGateway
        return PaymentHooks(
            stripeWebhook: effects.paymentWebhook,
            sandboxChallenge: sandbox.map { sandbox in
                { @Sendable intentId, confirm in
                    do {
                        _ =
                            confirm
                            ? try sandbox.completeChallenge(intentId: intentId)
                            : try sandbox.failChallenge(intentId: intentId)
                        return true
                    } catch {
                        return false
                    }
                }
            },
            wake: { [weak worker] in worker?.wake() })
    }
}

/// A reference set after the closures that read it were made, held weakly.
final class WeakBox<Value: AnyObject & Sendable>: Sendable {
    private struct Weak: @unchecked Sendable { weak var value: Value? }
    private let box = Mutex(Weak())
    var value: Value? {
        get { box.withLock { $0.value } }
        set { box.withLock { $0.value = newValue } }
    }
}
