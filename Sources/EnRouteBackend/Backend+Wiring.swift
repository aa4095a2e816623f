import Foundation
import EnRouteDomain
import EnRouteAPI
import EnRouteNotifications
import EnRouteSQLite
import EnRoutePostgres
import EnRouteStores
import EnRouteModels
import HTTPEngine
import EnRouteLogging

extension Backend {
    /// Every store on the configured engine.
    static func openStores(_ configuration: BackendConfiguration, now: @escaping @Sendable () -> Date) throws -> Stores
    {
        switch configuration.storage {
        case .memory:
            return Stores.memory()
        case .sqlite(let path):
            return try SQLiteStores.open(
                path: path, proofDirectory: configuration.proofDirectory,
                checkpointPages: configuration.sqliteCheckpointPages, now: now)
        case .postgres(let url, let schema):
            return try PostgresStores.open(
                url: url, schema: schema, poolLimits: configuration.postgresPool,
                databaseClock: configuration.databaseClockDecidesOfferExpiry,
                proofDirectory: configuration.proofDirectory, now: now)
        }
    }

    /// Quotes, holds and charges on the customers' default cards.
    static func makePayments(
        _ stores: Stores, estimator: any TripEstimator, _ configuration: BackendConfiguration, _ effects: BackendEffects
    ) -> TripPayments {
        // A store on disk or over the network keeps the quotes just given in memory too (quotes in memory already are).
        let quoteStore: any QuoteStore
        if case .memory = configuration.storage {
            quoteStore = stores.quotes
        } else {
            quoteStore = RecentQuotes(stores.quotes)
        }
        let quotes = QuoteBook(
            store: quoteStore, estimator: estimator, directory: stores.directory, rules: configuration.pricing,
            lifetime: configuration.quoteLifetime, ids: effects.quoteIDs, cities: configuration.cities,
            now: effects.now)
        let methods = stores.paymentMethods
        return TripPayments(
            quotes: quotes, gateway: effects.payments, store: stores.trips,
            defaultCard: { account in
                try await methods.defaultMethod(for: account).map {
                    SavedCard(id: $0.id, token: $0.token, card: CardSummary(brand: $0.card.brand, last4: $0.card.last4))
                }
            }, unattachedHoldTimeout: configuration.unattachedHoldTimeout, log: effects.log)
    }

    /// Presence, ingest, dispatch and the providers' streams.
    static func makeProviders(
        _ service: TripService, _ stores: Stores, offers: any OfferObserver, metrics: MetricsRegistry,
        peers: FanOut?, _ configuration: BackendConfiguration, _ effects: BackendEffects
    ) -> ProviderOperations {
        let ranking: any CandidateRanking =
            effects.roads.map { RoadRanking(roads: $0, now: effects.now, metrics: metrics) } ?? StraightLineRanking()
        return ProviderOperations(
            service: service, metrics: metrics, clock: effects.clock, paths: stores.paths,
            policy: configuration.dispatch, ranking: ranking, fixLifetime: configuration.fixLifetime,
            locations: effects.providerLocations, ids: effects.offerIDs, offers: offers, book: stores.offers,
            peers: peers, jitterSeed: effects.nearbyJitterSeed, speeds: effects.roadSpeeds, log: effects.log)
    }

    /// The HTTP API over every service.
    static func makeAPI(
        service: TripService, auth: Authenticator, metrics: MetricsRegistry, providers: ProviderOperations,
        stores: Stores, paymentMethods: PaymentMethods, worker: PaymentWorker, chat: ChatService,
        contact: ContactServices, _ configuration: BackendConfiguration, _ effects: BackendEffects
    ) -> EnRouteAPI {
        let store = stores.trips, log = effects.log
        var api = EnRouteAPI(
            service: service, auth: auth, metrics: metrics, providers: providers,
            rateLimiter: RateLimiter(configuration.rateLimits, clock: effects.clock),
            devices: NotificationsAPI(
                auth: auth, devices: stores.devices, ledger: stores.ledger, metrics: metrics, now: effects.now),
            directory: stores.directory, openAPI: configuration.openAPI, roads: effects.roads,
            paymentMethods: paymentMethods, paymentHooks: hooks(effects: effects, worker: worker), chat: chat,
            ready: { do { _ = try store.trip(id: "readiness-probe"); return true } catch { return false } },
            onOverride: { log.info("override: \($0)") })
        api.contact = contact
        return api
    }

    /// Connects the parts built: who wakes whom after a commit, what the quote book and the road estimator read, and
    /// the fan-out's messages to dispatch. Captures are weak where the service would otherwise keep a dropped backend
    /// alive.
    func connect() {
        let service = self.service, providers = self.providers, zones = self.zones
        let radius = configuration.dispatch.searchRadius
        fanOut?.onMessage { [weak providers] message in providers?.receive(message) }
        metrics.gauge(
            "enroute_payment_lag_seconds",
            help: "How long the oldest new payment job (a settlement, a tip, a callback) waited for the worker."
        ) { [weak paymentWorker] in paymentWorker?.lag ?? 0 }
        // The busy-time multiplier: the pickup's zone, as last counted.
        payments.quotes.measureDemand { [weak zones] point in
            guard let (zone, figures) = zones?.figures(at: point) else { return nil }
            return DemandZone(zone: zone.description, open: figures.open, idle: figures.idle)
        }
        let rule = payments.quotes.rules.demand
        web.showZones { [weak zones] in zones?.levels(rule: rule) ?? [] }
        service.onCommit { [weak paymentWorker] old, new in
            if PaymentWorker.hasWork(from: old, to: new) { paymentWorker?.wake() }
        }
        service.onCommit { [weak calls] old, new in
            if TripCalls.mayCloseSessions(from: old, to: new) { calls?.wake() }
        }
        guard let roadEstimator, let roads = effects.roads else { return }
        // Pickup waits in estimates: road time from the nearest available providers.
        roadEstimator.setNearbyProviders { [weak providers] pickup in
            await providers?.idleProviders(near: pickup, limit: roadEstimator.pickupWaitCandidates, within: radius)
                ?? []
        }
        let matching = CompletedPathMatching(roads: roads, paths: paths, log: effects.log)
        service.onCommit { [weak service] old, new in
            guard CompletedPathMatching.isCompletion(from: old, to: new), let service else { return }
            roadEstimator.spawn { await matching.match(new.id, into: service) }
        }
    }
}
