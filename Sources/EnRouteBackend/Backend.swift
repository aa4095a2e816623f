import Foundation
public import EnRouteDomain
import EnRouteSandbox
public import EnRouteAPI
public import EnRouteNotifications
public import HTTPEngine
import EnRouteStorage
import EnRoutePostgres
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
    private let seedDirectory: @Sendable (StaticDirectory) throws -> Void
    public let service: TripService
    /// The delivery pushes and Live Activity updates each order change plans.
    public let orderPushes: OrderPushPlanner
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
        let etaSamples: any EtaSampleStore
        let quoteStore: any QuoteStore
        let chatStore: any ChatStore
        let shareLinks: any ShareLinkStore
        let phones: any PhoneBook
        let contactSessions: any ContactSessionStore, proofUploads: any ProofUploadStore, blobs: any BlobStore
        let offerStore: any OfferStore
        let journal = OpsJournal(now: now)
        self.journal = journal
        var closeStorage: @Sendable () -> Void = {}
        switch configuration.storage {
        case .memory:
            etaSamples = InMemoryEtaSampleStore()
            paymentMethodStore = InMemoryPaymentMethodStore()
            quoteStore = InMemoryQuoteStore()
            chatStore = InMemoryChatStore()
            shareLinks = InMemoryShareLinkStore()
            contactSessions = InMemoryContactSessionStore(); proofUploads = InMemoryProofUploadStore();
            blobs = InMemoryBlobStore()
            let trips = InMemoryTripStore()
            store = trips
            offerStore = InMemoryOfferStore(tripWaiting: { id in (try? trips.trip(id: id))?.waitsForProvider ?? false })
            paths = InMemoryPathStore()
            let notifications = InMemoryNotifications()
            devices = notifications.devices
            ledger = notifications.ledger
            let directory = InMemoryDirectory()
            self.directory = directory
            phones = directory
            seedDirectory = { directory.seed($0) }
            schemaVersion = nil
        case .sqlite(let path):
            let trips = try SQLiteTripStore(path: path, now: now)
            let notifications = try SQLiteNotificationRepository(path: path)
            store = trips
            etaSamples = try SQLiteEtaSampleStore(tripStore: trips, now: now)
            paymentMethodStore = try SQLitePaymentMethodStore(tripStore: trips, now: now)
            quoteStore = try SQLiteQuoteStore(tripStore: trips, now: now)
            chatStore = try SQLiteChatStore(tripStore: trips, now: now)
            shareLinks = try SQLiteShareLinkStore(tripStore: trips, now: now)
            offerStore = try SQLiteOfferStore(tripStore: trips, now: now)
            contactSessions = try SQLiteContactSessionStore(tripStore: trips, now: now)
            proofUploads = try SQLiteProofUploadStore(tripStore: trips, now: now)
            blobs = try DiskBlobStore(directory: URL(fileURLWithPath: configuration.proofDirectory ?? path + ".blobs"))
            paths = try SQLitePathStore(tripStore: trips)
            devices = notifications
            ledger = notifications
            let directory = try SQLiteDirectory(path: path, now: now)
            self.directory = directory
            phones = directory
            seedDirectory = { try directory.seed($0) }
            schemaVersion = trips.schemaVersion
        case .postgres(let url, let schema):
            let trips = try PostgresTripStore(
                url: url, schema: schema, poolLimits: configuration.postgresPool,
                databaseClock: configuration.databaseClockDecidesOfferExpiry, now: now)
            store = trips
            closeStorage = { trips.close() }
            etaSamples = try PostgresEtaSampleStore(tripStore: trips, now: now)
            paymentMethodStore = try PostgresPaymentMethodStore(tripStore: trips, now: now)
            quoteStore = try PostgresQuoteStore(tripStore: trips, now: now)
            chatStore = try PostgresChatStore(tripStore: trips, now: now)
            shareLinks = try PostgresShareLinkStore(tripStore: trips, now: now)
            offerStore = try PostgresOfferStore(
                tripStore: trips, databaseClock: configuration.databaseClockDecidesOfferExpiry, now: now)
            contactSessions = try PostgresContactSessionStore(tripStore: trips, now: now)
            proofUploads = try PostgresProofUploadStore(tripStore: trips, now: now)
            blobs = try DiskBlobStore(
                directory: configuration.proofDirectory.map(URL.init(fileURLWithPath:))
                    ?? Self.scratchBlobFolder(url: url, schema: schema))
            paths = PostgresPathStore(tripStore: trips)
            let notifications = try PostgresNotificationRepository(tripStore: trips, now: now)
            devices = notifications
            ledger = notifications
            let directory = try PostgresDirectory(tripStore: trips, now: now)
            self.directory = directory
            phones = directory
            seedDirectory = { try directory.seed($0) }
            schemaVersion = trips.schemaVersion
        }
        self.closeStorage = closeStorage
        self.etaSamples = etaSamples
        let metrics = MetricsRegistry()
        self.metrics = metrics
        orderPushes = OrderPushPlanner(directory: directory)
        let roadEstimator = effects.roads.map {
            RoadEstimator(
                roads: $0, samples: etaSamples, timeZone: configuration.timeZone,
                metrics: metrics, log: log)
        }
        self.roadEstimator = roadEstimator
        let estimator: any TripEstimator = roadEstimator ?? StraightLineEstimator()
        let quotes = QuoteBook(
            store: quoteStore, estimator: estimator, directory: directory, rules: configuration.pricing,
            lifetime: configuration.quoteLifetime, ids: effects.quoteIDs, cities: configuration.cities, now: now)
        let methods = paymentMethodStore
        payments = TripPayments(
            quotes: quotes, gateway: effects.payments, store: store,
            defaultCard: { account in
                try await methods.defaultMethod(for: account).map {
                    SavedCard(id: $0.id, token: $0.token, card: CardSummary(brand: $0.card.brand, last4: $0.card.last4))
                }
            }, unattachedHoldTimeout: configuration.unattachedHoldTimeout, log: log)
        service = TripService(
            store: store, directory: directory, estimator: estimator, ids: effects.tripIDs,
            observers: [orderPushes], endedCacheLimit: configuration.endedTripCache, payments: payments,
            cities: configuration.cities, node: effects.liveBus == nil ? nil : configuration.node, now: now)
        let service = self.service
        fanOut = effects.liveBus.map { bus in
            FanOut(
                node: configuration.node, service: service, bus: bus, cities: configuration.cities.names,
                clock: effects.clock, log: log)
        }
        paymentWorker = PaymentWorker(
            service: service, measurement: PathMeasurement(paths: paths, hasRoads: effects.roads != nil),
            clock: effects.clock, now: now, log: log)
        metrics.gauge(
            "enroute_payment_lag_seconds",
            help: "How long the oldest new payment job (a settlement, a tip, a callback) waited for the worker."
        ) {
            [weak paymentWorker] in paymentWorker?.lag ?? 0
        }
        // Dispatch hands each offer to the planner, whose new job wakes the sender, which asks dispatch
        // whether the offer is still open when it sends. The planner holds the sender weakly, so the
        // cycle is broken and a backend is released as a whole.
        let lateSender = WeakBox<PushSender>()
        let pushes = PushQueue(store: store, devices: devices, now: now, queued: { lateSender.value?.wake() }, log: log)
        let offers = OfferPushPlanner(queue: pushes)
        providers = ProviderOperations(
            service: service, metrics: metrics, clock: effects.clock, paths: paths,
            policy: configuration.dispatch,
            ranking: effects.roads.map { RoadRanking(roads: $0, now: now, metrics: metrics) as any CandidateRanking }
                ?? StraightLineRanking(),
            fixLifetime: configuration.fixLifetime, locations: effects.providerLocations,
            ids: effects.offerIDs, offers: journal.observing(offers), book: offerStore, peers: fanOut,
            jitterSeed: effects.nearbyJitterSeed, speeds: effects.roadSpeeds, log: log)
        fanOut?.onMessage { [weak providers] message in providers?.receive(message) }
        self.offerStore = offerStore
        let dispatcher = providers.dispatcher
        do {
            let providers = self.providers, service = self.service, radius = configuration.dispatch.searchRadius
            // The busy-time multiplier: rides waiting near the pickup against free providers near it.
            // Weakly held: the service owns the quote book, and presence reads the service's clock, so strong captures
            // would keep
            // a dropped backend's service alive. Presence that cannot be read prices without the multiplier.
            quotes.measureDemand { [weak service, weak providers] point in
                guard let service, let presence = providers?.presence else { return (0, 0) }
                return (
                    service.openRequests(near: point, within: radius),
                    try await presence.nearest(to: point, limit: 500, within: radius) { service.isIdle(provider: $0) }
                        .count
                )
            }
            // An ended trip's settlement, a tip: the worker hears of it at once.
            service.onCommit { [weak paymentWorker] old, new in
                if (old?.status.isActive ?? false) && !new.status.isActive && new.payment != nil
                    || new.tip?.state == .pending
                {
                    paymentWorker?.wake()
                }
            }
        }
        if let roadEstimator, let roads = effects.roads {
            let presence = providers.presence, service = self.service, paths = self.paths
            // Pickup waits in estimates: road time from the nearest available providers (none, the standard wait, when
            // presence cannot be read).
            roadEstimator.setNearbyProviders { pickup in
                let hits = try? await presence.nearest(
                    to: pickup, limit: roadEstimator.pickupWaitCandidates,
                    within: configuration.dispatch.searchRadius
                ) { service.isIdle(provider: $0) }
                return hits?.map(\.coordinate) ?? []
            }
            // At completion the kept path is matched onto the roads: the measurement the final price rests on.
            service.onCommit { old, new in
                guard old?.status.isActive ?? false,
                    new.status == .ride(.completed) || new.status == .delivery(.delivered)
                else { return }
                roadEstimator.spawn {
                    do {
                        let points = try await paths.path(tripId: new.id)
                        guard points.count > 1 else { return }
                        let fixes = points.map {
                            RoadFix(
                                coordinate: Coordinate(lat: $0.lat, lng: $0.lng),
                                heading: $0.heading >= 0 ? $0.heading : nil,
                                recordedAt: $0.recordedAt)
                        }
                        let matched = try await roads.match(fixes)
                        try await service.recordMatchedPath(
                            of: new.id, distanceMeters: matched.distanceMeters.rounded(),
                            durationSeconds: matched.durationSeconds.rounded())
                    } catch {
                        log("roads: could not match the path of trip \(new.id): \(error)")
                    }
                }
            }
        }
        sender = PushSender(
            store: store, devices: devices, ledger: ledger, gateway: journal.recording(effects.push),
            clock: effects.clock, now: now,
            metrics: metrics,
            offerIsOpen: { offerId, provider in dispatcher.liveOffer(heldBy: provider)?.offerId == offerId },
            log: log)
        lateSender.value = sender
        chat = ChatService(
            store: chatStore, trips: service, policy: configuration.chat,
            notifier: ChatPushPlanner(queue: pushes),
            clock: effects.clock, now: now, log: log)
        auth = Authenticator(
            secret: configuration.secret, previousSecrets: configuration.previousSecrets,
            leeway: configuration.tokenLeeway, now: now)
        paymentMethods = PaymentMethods(
            store: paymentMethodStore, gateway: effects.payments, ids: effects.paymentMethodIDs, now: now)
        let store = self.store
        calls = TripCalls(
            service: service,
            relay: effects.telephony ?? LogTelephonyRelay(pool: LogTelephonyRelay.defaultPool, log: log),
            sessions: contactSessions, phones: phones, policy: configuration.calls, clock: effects.clock, now: now,
            log: log)
        proofs = ProofUploads(
            service: service, uploads: proofUploads, blobs: blobs, ids: effects.uploadIDs, now: now,
            sha256: EnRouteAPI.sha256Hex)
        service.onCommit { [weak calls] old, new in
            if old?.status.isActive == true && !new.status.isActive
                || old?.providerId != nil && old?.providerId != new.providerId
            {
                calls?.wake()
            }
        }
        var api = EnRouteAPI(
            service: service, auth: auth, metrics: metrics, providers: providers,
            rateLimiter: RateLimiter(configuration.rateLimits, clock: effects.clock),
            devices: NotificationsAPI(auth: auth, devices: devices, ledger: ledger, metrics: metrics, now: now),
            directory: directory,
            openAPI: configuration.openAPI,
            roads: effects.roads,
            paymentMethods: paymentMethods,
            paymentHooks: Self.hooks(effects: effects, worker: paymentWorker),
            chat: chat,
            ready: { do { _ = try store.trip(id: "readiness-probe"); return true } catch { return false } },
            onOverride: { log("override: \($0)") })
        api.contact = ContactServices(calls: calls, phones: phones, proofs: proofs)
        self.api = api
        web = WebSurfaces(
            service: service, providers: providers, paths: paths, auth: auth, wire: api.wire,
            secret: configuration.secret,
            links: shareLinks, journal: journal, roadMap: effects.roadMap, clock: effects.clock,
            configuration: configuration.web)
        var router = api.router()
        web.register(into: &router)
        self.router = router
    }

    /// Writes `content`'s merchants and provider profiles into the directory now (creating or replacing
    /// each), before serving: how tests and benchmarks give the backend its parties.
    public func seed(_ content: StaticDirectory) throws { try seedDirectory(content) }

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
        let calls = self.calls, proofs = self.proofs
        tasks.withLock {
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

    /// Where proof bytes go with PostgreSQL storage and no `proofDirectory`: one folder per database and schema.
    static func scratchBlobFolder(url: String, schema: String?) -> URL {
        let name = (url + "|" + (schema ?? "")).unicodeScalars.map {
            CharacterSet.alphanumerics.contains($0) ? String($0) : "_"
        }.joined()
        return FileManager.default.temporaryDirectory.appendingPathComponent("enroute-proofs-" + name.suffix(80))
    }

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

/// How final prices are measured: the map-matched path when roads are configured, else the stored path's length.
struct PathMeasurement: TripMeasurement {
    let paths: any PathStore
    let hasRoads: Bool

    func measured(_ trip: TripRecord, final: Bool) async -> TripMeasured {
        if let d = trip.matchedDistanceMeters, let t = trip.matchedDurationSeconds {
            return .value(distanceMeters: d, durationSeconds: t)
        }
        guard let points = try? await paths.path(tripId: trip.id), points.count > 1, let first = points.first,
            let last = points.last
        else { return .none }
        // The match is made just after completion: wait for it, unless this is the last try.
        if hasRoads && !final { return .pending }
        let metres = zip(points, points.dropFirst()).reduce(0.0) { sum, pair in
            sum
                + StraightLineEstimator.distance(
                    Coordinate(lat: pair.0.lat, lng: pair.0.lng), Coordinate(lat: pair.1.lat, lng: pair.1.lng))
        }
        return .value(distanceMeters: metres, durationSeconds: last.recordedAt.timeIntervalSince(first.recordedAt))
    }

    func providerProgressed(_ trip: TripRecord, since assignedAt: Date) async -> Bool {
        guard let points = try? await paths.path(tripId: trip.id) else { return false }
        let after = points.filter { $0.recordedAt >= assignedAt }
        guard let first = after.first, let last = after.last else { return false }
        let start = StraightLineEstimator.distance(Coordinate(lat: first.lat, lng: first.lng), trip.pickup)
        let now = StraightLineEstimator.distance(Coordinate(lat: last.lat, lng: last.lng), trip.pickup)
        // At least 100 m closer to the pickup than when the provider took the trip.
        return start - now >= 100
    }
}

/// In-memory devices and ledger, made together.
private struct InMemoryNotifications {
    let devices = InMemoryDeviceRepository()
    let ledger = InMemoryNotificationLedger()
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
