public import Foundation
public import EnRouteDomain
import EnRouteSandbox
public import EnRouteAPI
public import EnRouteNotifications
public import EnRouteWeb
public import EnRoutePostgres
public import EnRouteLogging

/// Everything the backend is told, from `enroute serve`'s flags or a test: one value, no hidden defaults elsewhere.
public struct BackendConfiguration: Sendable {
    /// Where trips, paths, devices, the outbox and the directory (merchants, provider profiles) live.
    public enum Storage: Sendable, Equatable {
        /// In memory, gone with the process (tests, benchmarks).
        case memory
        /// One SQLite file, created if missing.
        case sqlite(path: String)
        /// A PostgreSQL database (`postgres://user@host:port/db`), its tables in `schema` (created if missing) or the
        /// connection's default schema; proof bytes stay on disk (`proofDirectory`).
        case postgres(url: String, schema: String? = nil)
    }

    public var storage: Storage
    /// On PostgreSQL, how many connections the stores' pool opens and keeps.
    public var postgresPool = PostgresPoolLimits()
    /// The HS256 secret that signs and verifies bearer tokens.
    public var secret: String
    /// Retired secrets whose tokens still verify while the secret rotates.
    public var previousSecrets: [String] = []
    /// Clock skew allowed on a token's exp, nbf and iat, in seconds.
    public var tokenLeeway: TimeInterval = 30
    /// Per-account limits by route class.
    public var rateLimits: RateLimits = .standard
    /// Offer time limits, candidates per search, search deadlines.
    public var dispatch = DispatchPolicy()
    /// Seconds a provider's latest position counts.
    public var fixLifetime: TimeInterval = 120
    /// Ended trips kept in memory for the reads that follow their end.
    public var endedTripCache = 10_000
    /// The OpenAPI document served at `/openapi.yaml`.
    public var openAPI = ""
    /// The service area's time zone, for the ETA error model's hour of the week.
    public var timeZone = TimeZone(identifier: "UTC")!
    /// The price list quotes and final prices are computed under.
    public var pricing = PricingRules()
    /// How long a quote holds before a request naming it is refused with a fresh one.
    public var quoteLifetime: TimeInterval = 300
    /// A hold whose trip was never created (its request failed or died) is released this long after it was placed.
    public var unattachedHoldTimeout: TimeInterval = 15 * 60
    /// Trips' chats: message size, rate per party, and how long after the end the messages are removed (24 h).
    public var chat = ChatPolicy()
    /// The share page's and the ops console's settings (Leaflet's folder, link lifetimes).
    public var web = WebConfiguration()
    /// When relayed calls are allowed and when their sessions close.
    public var calls = CallPolicy()
    /// Where proof uploads' bytes go; nil: `<db>.blobs` beside an SQLite database, or with PostgreSQL a folder per
    /// database and schema in the temporary directory.
    public var proofDirectory: String?
    /// With SQLite storage, the write-ahead log's size in pages at which a checkpointer copies it into the database
    /// (SQLite's own threshold by default).
    public var sqliteCheckpointPages = 1_000
    /// The cities trips, provider positions and streams are partitioned by (`enroute serve --cities FILE`); one city
    /// everywhere by default.
    public var cities = Cities.everywhere
    /// This node's id among several sharing one store and live bus (`BackendEffects.liveBus`); unused on a node of its
    /// own.
    public var node = "main"
    /// With PostgreSQL storage, the database's clock decides whether an offer, a search lease or a relay lease ran out
    /// (nodes' clocks may disagree); otherwise the injected clock does.
    public var databaseClockDecidesOfferExpiry = false

    /// A configuration over `storage` (which also holds the merchants and provider profiles), signing tokens with
    /// `secret`.
    public init(storage: Storage, secret: String) {
        self.storage = storage; self.secret = secret
    }
}

/// The effects the backend runs on: every clock, id source, random seed, outbound transport and log.
public struct BackendEffects: Sendable {
    /// Offer time limits, search deadlines, rate limits and the push sender's polls sleep on it.
    public var clock: any Clock<Duration>
    /// Wall time, for records and tokens.
    public var now: @Sendable () -> Date
    /// Trip ids.
    public var tripIDs: any IDGenerator
    /// Offer ids.
    public var offerIDs: any IDGenerator
    /// The secret behind the nearby map's per-provider offsets.
    public var nearbyJitterSeed: UInt64
    /// Where pushes go: APNs, or a log.
    public var push: any PushGateway
    /// The server's log (one line per message).
    public var log: Logger
    /// The road network routes, tables and snapping come from; nil for straight lines only.
    public var roads: (any RoadRouting)?
    /// Where kept fixes go to become road speeds (and whose loop the backend runs); nil when speeds stay fixed.
    public var roadSpeeds: (any RoadSpeedFeedback)?
    /// Where holds, captures and charges go: the in-process sandbox unless another gateway is given.
    public var payments: any PaymentGateway
    /// Saved payment method ids.
    public var paymentMethodIDs: any IDGenerator
    /// Quote ids.
    public var quoteIDs: any IDGenerator
    /// Verifies a gateway's webhook (Stripe's `Stripe-Signature` over the raw body) and reads its event; nil: no
    /// webhooks.
    public var paymentWebhook: (@Sendable (_ body: [UInt8], _ signature: String?) throws -> GatewayEvent)?
    /// The road map the browser pages draw (from the loaded graph); nil: pages without roads.
    public var roadMap: RoadMap?
    /// The relay calls go through; nil: the log-sink relay over its default pool.
    public var telephony: (any TelephonyRelay)?
    /// Proof upload ids (when the client names none).
    public var uploadIDs: any IDGenerator = SequentialIDGenerator(prefix: "U")
    /// The bus between the nodes sharing the store; nil: a node of its own, whose changes reach only its own watchers.
    public var liveBus: (any LiveBus)?
    /// Who is online and where, shared by every node of a deployment (Redis, on the configuration's cities and fix
    /// lifetime, on `now`); nil: a `ProviderPresence` of this node's own. Required with `liveBus`.
    public var providerLocations: (any ProviderLocations)?

    /// Effects given one by one.
    public init(
        clock: any Clock<Duration>, now: @escaping @Sendable () -> Date, tripIDs: any IDGenerator,
        offerIDs: any IDGenerator,
        nearbyJitterSeed: UInt64, push: any PushGateway, log: Logger,
        roads: (any RoadRouting)? = nil, roadSpeeds: (any RoadSpeedFeedback)? = nil,
        payments: (any PaymentGateway)? = nil, paymentMethodIDs: (any IDGenerator)? = nil,
        quoteIDs: (any IDGenerator)? = nil,
        paymentWebhook: (@Sendable ([UInt8], String?) throws -> GatewayEvent)? = nil
    ) {
        self.clock = clock; self.now = now; self.tripIDs = tripIDs; self.offerIDs = offerIDs
        self.nearbyJitterSeed = nearbyJitterSeed; self.push = push; self.log = log; self.roads = roads;
        self.roadSpeeds = roadSpeeds
        // Deterministic by default, like the ids given here: a sandbox with sequential intent and event ids on `now`.
        self.payments =
            payments ?? SandboxGateway(baseURL: Self.sandboxBaseURL, ids: SequentialIDGenerator(prefix: ""), now: now)
        self.paymentMethodIDs = paymentMethodIDs ?? SequentialIDGenerator(prefix: "")
        self.quoteIDs = quoteIDs ?? SequentialIDGenerator(prefix: "")
        self.paymentWebhook = paymentWebhook
    }

    /// Where the default sandbox's bank challenges are served.
    public static let sandboxBaseURL = URL(string: "http://localhost:8080")!

    /// The running system's effects: the continuous clock, the wall clock, random ids and a random jitter secret.
    /// Payments go to `payments`, or to a sandbox with random ids.
    public static func system(
        push: any PushGateway, roads: (any RoadRouting)? = nil, roadSpeeds: (any RoadSpeedFeedback)? = nil,
        payments: (any PaymentGateway)? = nil,
        paymentWebhook: (@Sendable ([UInt8], String?) throws -> GatewayEvent)? = nil,
        log: Logger
    ) -> BackendEffects {
        BackendEffects(
            clock: ContinuousClock(), now: { Date() }, tripIDs: RandomIDGenerator(), offerIDs: RandomIDGenerator(),
            nearbyJitterSeed: .random(in: .min ... .max), push: push, log: log, roads: roads, roadSpeeds: roadSpeeds,
            payments: payments ?? SandboxGateway(baseURL: sandboxBaseURL, ids: RandomIDGenerator(), now: { Date() }),
            paymentMethodIDs: RandomIDGenerator(), quoteIDs: RandomIDGenerator(), paymentWebhook: paymentWebhook
        )
        .with(uploadIDs: RandomIDGenerator())
    }

    /// These effects with other upload ids.
    func with(uploadIDs: any IDGenerator) -> BackendEffects { var copy = self; copy.uploadIDs = uploadIDs; return copy }
}
