// swift-tools-version:6.0
import PackageDescription

// The layers, inward first (the README's module map mirrors this file, and scripts/check-dependencies.sh
// checks both): C libraries, each behind one wrapper ← shared wire types ← the server's domain ← its
// adapters and API ← the composition root ← executables. The client kit depends on the shared modules only; the
// server's outside-service adapters use its transport (HTTPTransport), never its view models.

/// One set of settings for every target: Swift 6 mode, explicit `any`, internal imports.
let settings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "EnRoute",
    platforms: [.macOS(.v14), .iOS(.v17)],
    products: [
        .library(name: "EnRouteModels", targets: ["EnRouteModels"]),
        .library(name: "HTTPTransport", targets: ["HTTPTransport"]),
        .library(name: "ClientKit", targets: ["ClientKit"]),
        .library(name: "OrderTracking", targets: ["OrderTracking"]),
        .library(name: "OrderTrackingActivity", targets: ["OrderTrackingActivity"]),
        .library(name: "RideHailing", targets: ["RideHailing"]),
        .library(name: "RideHailingPreviews", targets: ["RideHailingPreviews"]),
        .library(name: "ProviderKit", targets: ["ProviderKit"]),
        .library(name: "NotificationsKit", targets: ["NotificationsKit"]),
        .library(name: "AppleAdapters", targets: ["AppleAdapters"]),
    ],
    targets: []
)

/// Where the server's modules build: epoll, eventfd and accept4 are Linux's.
let linuxOnly: [Platform] = [.linux]

// MARK: - C libraries (each wrapped by exactly one Swift module)

package.targets += [
    /// Linux's epoll, eventfd and TCP option headers, which Swift's Glibc module leaves out (headers only, no library).
    /// The server is Linux-only for them: `HTTPEngine` (and every module over it) and `RedisClient` stop with an
    /// `#error` elsewhere; on Apple platforms only the client kit's products build.
    .systemLibrary(name: "CEpoll"),
    .systemLibrary(name: "COpenSSL", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
    .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
    .systemLibrary(name: "CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
    .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
    .systemLibrary(name: "CLibPQ", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
]

// MARK: - Shared

package.targets += [
    /// Wire types used by the server and every client, and the wire contract (APIPath, LiveEventName): one definition
    /// each.
    .target(name: "EnRouteModels", swiftSettings: settings),
    /// OpenSSL's libcrypto behind a small Swift surface (digests, HMAC, JWT signing, HPKE).
    .target(name: "EnRouteCrypto", dependencies: ["COpenSSL"], swiftSettings: settings),
    /// SQLite behind a small Swift surface (connection, statements, transactions), for the server's stores and the
    /// provider's device store.
    /// Apple platforms use the SDK's own `SQLite3`; CSQLite is linked on Linux only.
    .target(
        name: "SQLiteClient", dependencies: [.target(name: "CSQLite", condition: .when(platforms: [.linux]))],
        swiftSettings: settings),
]

// MARK: - Server: domain (no HTTP, no storage engine, no transport)

package.targets += [
    /// The trip domain: trips and their rules, the service and its repositories, dispatch, live-location ingest,
    /// geo and estimators, the directory; metrics behind a protocol of its own.
    /// Levelled, structured logging in swift-log's shape: text or JSON lines, a request id on every line a request
    /// causes.
    .target(name: "EnRouteLogging", swiftSettings: settings),
    .target(name: "EnRouteDomain", dependencies: ["EnRouteModels", "EnRouteLogging"], swiftSettings: settings),
    /// Push notifications on the server: devices, opens, the push planners, outbox and sender.
    .target(
        name: "EnRouteNotifications",
        dependencies: ["EnRouteDomain", "EnRouteModels", "EnRouteCrypto", "EnRouteLogging"],
        swiftSettings: settings),
]

// MARK: - Roads (the car profile and the router over OSM-derived graphs; the OSM reader)

package.targets += [
    /// Roads: the car profile over plain OSM tags, the road graph and its queries; no I/O, no dependencies.
    .target(name: "Routing", swiftSettings: settings),
    /// The OSM PBF reader (the one wrapper of zlib): nodes, ways and relations streamed from OpenStreetMap extracts.
    .target(name: "OSMPBF", dependencies: ["CZlib"], swiftSettings: settings),
    /// OSM to road network: car ways split at junctions into directed edges, restrictions, islands removed.
    .target(name: "RoadBuilder", dependencies: ["OSMPBF", "Routing"], swiftSettings: settings),
    /// Road routing behind the domain's seam: EnRoute's own graph in process, or an external OSRM over HTTP.
    .target(
        name: "EnRouteRoads",
        dependencies: ["EnRouteDomain", "EnRouteModels", "Routing", "HTTPTransport", "EnRouteLogging"],
        swiftSettings: settings),
]

// MARK: - Server: adapters and API

package.targets += [
    /// HTTP/1.1 on epoll event loops of its own: async handlers, a router, SSE and WebSocket.
    .target(
        name: "HTTPEngine",
        dependencies: [
            .target(name: "CEpoll", condition: .when(platforms: linuxOnly)), "EnRouteCrypto", "EnRouteModels",
            "EnRouteLogging",
        ],
        swiftSettings: settings),
    /// The HTTP API over the domain: route groups (rides, orders, provider, merchant, ops, directory, devices),
    /// the idempotency middleware, authentication, rate limits, live streams and error mapping.
    .target(
        name: "EnRouteAPI",
        dependencies: ["EnRouteDomain", "EnRouteNotifications", "EnRouteModels", "HTTPEngine", "EnRouteCrypto"],
        swiftSettings: settings),
    /// libpq behind a small Swift surface (connections from a URL, parameterised queries, SQLSTATE errors,
    /// transactions,
    /// migrations, a pool whose blocking calls run off the cooperative pool).
    .target(name: "PostgresClient", dependencies: ["CLibPQ"], swiftSettings: settings),
    /// The set of stores a node keeps (`Stores`), opened together by each storage engine; the in-memory engine, and
    /// proof bytes on disk for the engines that keep files.
    .target(name: "EnRouteStores", dependencies: ["EnRouteDomain", "EnRouteNotifications"], swiftSettings: settings),
    /// SQLite adapters for the domain's and the notifications' repositories.
    .target(
        name: "EnRouteSQLite",
        dependencies: ["SQLiteClient", "EnRouteDomain", "EnRouteNotifications", "EnRouteModels", "EnRouteStores"],
        swiftSettings: settings),
    /// PostgreSQL adapters (over PostgresClient) for every store the SQLite adapters keep, the invariants enforced by
    /// the database.
    .target(
        name: "EnRoutePostgres",
        dependencies: ["PostgresClient", "EnRouteDomain", "EnRouteNotifications", "EnRouteModels", "EnRouteStores"],
        swiftSettings: settings),
    /// The APNs transport: token auth and HTTP/2 requests to Apple's hosts, over CurlTransport.
    .target(
        name: "EnRouteAPNs",
        dependencies: ["EnRouteNotifications", "EnRouteCrypto", "CurlTransport", "HTTPTransport", "EnRouteLogging"],
        swiftSettings: settings),
    /// Twilio Proxy behind the domain's `TelephonyRelay` (Services / Sessions / Participants over an injected
    /// `HTTPClient`).
    .target(
        name: "EnRouteTwilio", dependencies: ["EnRouteDomain", "EnRouteModels", "HTTPTransport"],
        swiftSettings: settings),
    /// The Stripe `PaymentGateway` (PaymentIntents over an injected `HTTPClient`) and Stripe's webhook signatures.
    .target(
        name: "EnRouteStripe", dependencies: ["EnRouteDomain", "EnRouteModels", "EnRouteCrypto", "HTTPTransport"],
        swiftSettings: settings),
    /// In-process stand-ins for the outside services, the defaults for the demo and development: a payment gateway
    /// that answers Stripe's test payment methods, and a telephony relay that only logs.
    .target(
        name: "EnRouteSandbox", dependencies: ["EnRouteDomain", "EnRouteModels", "EnRouteLogging"],
        swiftSettings: settings),
    /// A RESP2 Redis client of the project's own over POSIX sockets: commands, pipelines, reconnects, stream reading.
    .target(name: "RedisClient", swiftSettings: settings),
    /// Redis adapters of the domain's seams: provider locations (latest fixes, time-bucketed geo keys).
    .target(
        name: "EnRouteRedis", dependencies: ["EnRouteDomain", "EnRouteModels", "RedisClient"], swiftSettings: settings),
]

// MARK: - Server: composition root

package.targets += [
    /// The backend wired from one configuration and one set of effects, used by `enroute serve`, the
    /// in-process test backend and the benchmarks.
    .target(
        name: "EnRouteBackend",
        dependencies: [
            "EnRouteDomain", "EnRouteAPI", "EnRouteNotifications", "EnRouteSQLite", "EnRoutePostgres", "HTTPEngine",
            "EnRouteModels", "EnRouteWeb", "EnRouteSandbox", "EnRouteStores", "EnRouteLogging",
        ],
        swiftSettings: settings),
    // The browser surfaces: the share page, the ops console, the road map. It reuses the tracking kit's freshness
    // policy (OrderTracking: pure Foundation) so the page words ETAs and pins exactly as the app does.
    .target(
        name: "EnRouteWeb",
        dependencies: [
            "EnRouteAPI", "EnRouteDomain", "EnRouteNotifications", "EnRouteModels", "HTTPEngine", "EnRouteCrypto",
            "Routing", "OrderTracking",
        ],
        swiftSettings: settings),
]

// MARK: - Client kit (never imports a server module; on iOS no C library but the SDK's SQLite)

package.targets += [
    /// The HTTP transport contract (HTTPClient, SSE parsing, the API's requests and errors), its URLSession
    /// implementation and the lock they share with the kits; no view models, so server adapters use it too.
    .target(name: "HTTPTransport", dependencies: ["EnRouteModels"], swiftSettings: settings),
    /// The kits' shared client logic: the trip chat and call view models, the location reading policy, the date seam.
    .target(name: "ClientKit", dependencies: ["HTTPTransport", "EnRouteModels"], swiftSettings: settings),
    /// Live order tracking for the customer.
    .target(
        name: "OrderTracking", dependencies: ["ClientKit", "HTTPTransport", "EnRouteModels"], swiftSettings: settings),
    /// Seeds 002 and 003: the rider app and the ride tracking view model.
    .target(
        name: "RideHailing", dependencies: ["ClientKit", "HTTPTransport", "EnRouteModels"], swiftSettings: settings),
    /// Fakes for SwiftUI previews and demos of the rider kit (a scripted ride); never in production wiring.
    .target(name: "RideHailingPreviews", dependencies: ["RideHailing", "EnRouteModels"], swiftSettings: settings),
    /// The provider's app logic (point buffer, step outbox, offers, session) and the merchant's orders.
    .target(
        name: "ProviderKit", dependencies: ["ClientKit", "HTTPTransport", "EnRouteModels", "SQLiteClient"],
        swiftSettings: settings),
    /// The client's notification logic (permission, registration, taps, routes, the service extension).
    /// Its HPKE is CryptoKit's on Apple platforms; EnRouteCrypto (OpenSSL) is linked on Linux only.
    .target(
        name: "NotificationsKit",
        dependencies: [
            "HTTPTransport", "EnRouteModels", .target(name: "EnRouteCrypto", condition: .when(platforms: [.linux])),
        ],
        swiftSettings: settings),
    /// A living city: providers, riders, shoppers and merchants on the client kits against a server, with
    /// faults,
    /// simulated time and the report of what the clients saw.
    .target(
        name: "CitySimulator",
        dependencies: ["ClientKit", "HTTPTransport", "EnRouteModels", "OrderTracking", "RideHailing", "ProviderKit"],
        swiftSettings: settings),
    /// The order's Live Activity attributes, for the app and its widget extension alike (ActivityKit only; empty
    /// elsewhere): a module of its own so the widget links no more than this and the wire types.
    .target(name: "OrderTrackingActivity", dependencies: ["EnRouteModels"], swiftSettings: settings),
    /// SwiftUI, MapKit and ActivityKit adapters; compiled only on Apple platforms.
    .target(
        name: "AppleAdapters",
        dependencies: [
            "ClientKit", "HTTPTransport", "EnRouteModels", "OrderTracking", "OrderTrackingActivity", "RideHailing",
            "NotificationsKit", "ProviderKit",
        ],
        swiftSettings: settings),
]

// MARK: - Transports and tools

package.targets += [
    /// The one wrapper of libcurl: an HTTPClient for Linux tools and the simulator, and HTTP2Session (APNs over
    /// HTTP/2).
    .target(name: "CurlTransport", dependencies: ["CCurl", "HTTPTransport"], swiftSettings: settings),
    .executableTarget(
        name: "enroute",
        dependencies: [
            "EnRouteBackend", "EnRouteDomain", "EnRouteAPI", "EnRouteSQLite", "HTTPEngine", "EnRouteModels",
            "EnRouteCrypto",
            "EnRouteNotifications", "EnRouteAPNs", "OrderTracking", "RideHailing", "ClientKit", "HTTPTransport",
            "CurlTransport",
            "ProviderKit",
            "RoadBuilder", "Routing", "EnRouteRoads", "EnRouteStripe", "CitySimulator", "EnRouteWeb", "EnRouteTwilio",
            "EnRouteRedis", "RedisClient", "EnRoutePostgres", "EnRouteSandbox", "EnRouteLogging",
        ],
        resources: [.copy("Resources/openapi.yaml")],
        swiftSettings: settings
    ),
    /// The HTTP engine's benchmark harness (bench/http-engine.sh).
    .executableTarget(name: "engine-bench", dependencies: ["HTTPEngine"], swiftSettings: settings),
    /// The router's benchmark harness on seeded random grids: CH build time and memory, CH vs Dijkstra
    /// (bench/routing-grid.sh).
    .executableTarget(
        name: "routing-bench", dependencies: ["Routing", "OSMPBF", "RoadBuilder"], swiftSettings: settings),
    /// The dispatch, live-location and soak benchmarks' harness (bench/ingest.sh, bench/fanout.sh, bench/candidates.sh,
    /// bench/soak.sh).
    .executableTarget(
        name: "server-bench",
        dependencies: [
            "EnRouteBackend", "EnRouteDomain", "EnRouteAPI", "EnRouteNotifications", "EnRouteSQLite", "SQLiteClient",
            "EnRouteModels", "HTTPEngine", "PostgresClient", "EnRouteLogging",
        ],
        swiftSettings: settings),
]

// MARK: - Tests

package.targets += [
    /// Fixtures and fakes shared by the test targets: a manual clock, `eventually`, the production backend in memory,
    /// on SQLite or (ENROUTE_TEST_STORE=postgres) on PostgreSQL.
    .target(
        name: "TestSupport",
        dependencies: [
            "EnRouteModels", "ClientKit", "HTTPTransport", "HTTPEngine", "EnRouteDomain", "EnRouteAPI",
            "EnRouteBackend", "EnRouteNotifications",
            "EnRouteRoads", "RoadBuilder", "Routing", "EnRouteCrypto", "EnRouteWeb", "EnRouteSQLite",
            "EnRoutePostgres", "EnRouteLogging", "EnRouteAPNs",
        ],
        swiftSettings: settings),
    /// The shared test helpers themselves (`eventually`).
    .testTarget(name: "TestSupportTests", dependencies: ["TestSupport", "HTTPEngine"], swiftSettings: settings),
    .testTarget(name: "EnRouteModelsTests", dependencies: ["EnRouteModels"], swiftSettings: settings),
    /// The car profile and the router on hand-built graphs and real OSM tag sets.
    .testTarget(name: "RoutingTests", dependencies: ["Routing", "TestSupport"], swiftSettings: settings),
    /// Every store against a real temporary SQLite file and, with ENROUTE_TEST_POSTGRES_URL, a fresh PostgreSQL schema.
    .testTarget(
        name: "EnRouteStorageTests",
        dependencies: [
            "EnRouteSQLite", "EnRoutePostgres", "PostgresClient", "EnRouteDomain", "EnRouteNotifications",
            "EnRouteModels", "EnRouteStores", "SQLiteClient", "TestSupport",
        ],
        swiftSettings: settings),
    .testTarget(
        name: "HTTPEngineTests", dependencies: ["HTTPEngine", "TestSupport", "EnRouteModels", "EnRouteLogging"],
        swiftSettings: settings),
    .testTarget(name: "EnRouteLoggingTests", dependencies: ["EnRouteLogging"], swiftSettings: settings),
    /// The domain's rules and services without HTTP or sockets: the trip machine, the cache, pricing, payments,
    /// ledger, chat policy, cities, ETA models.
    .testTarget(
        name: "EnRouteDomainTests",
        dependencies: [
            "EnRouteDomain", "EnRouteModels", "EnRouteSandbox", "EnRouteLogging", "EnRouteRoads", "TestSupport",
        ],
        swiftSettings: settings),
    /// The API through the router in-process, over the production wiring (`Backend`), in memory and on SQLite.
    .testTarget(
        name: "EnRouteAPITests",
        dependencies: [
            "EnRouteDomain", "EnRouteAPI", "EnRouteBackend", "EnRouteSQLite", "HTTPEngine", "TestSupport",
            "EnRouteModels", "EnRouteRoads", "EnRouteCrypto", "HTTPTransport", "CurlTransport", "EnRouteNotifications",
            "EnRouteStripe", "EnRouteTwilio", "SQLiteClient", "EnRouteSandbox", "EnRouteLogging", "EnRouteAPNs",
        ],
        swiftSettings: settings),
    /// Everything that opens a socket or drives a browser with real-time deadlines: the HTTP engine's servers, the
    /// live streams, the Stripe, Twilio and fault-proxy stand-ins, the HTTP client contract, the browser pages.
    /// `make test` runs it on its own, after the rest.
    .testTarget(
        name: "EnRouteIntegrationTests",
        dependencies: [
            "EnRouteDomain", "EnRouteAPI", "EnRouteBackend", "EnRouteSQLite", "HTTPEngine", "TestSupport",
            "EnRouteModels", "EnRouteCrypto", "HTTPTransport", "CurlTransport", "EnRouteStripe", "EnRouteTwilio",
            "EnRouteSandbox", "EnRouteLogging", "EnRouteWeb", "Routing", "EnRouteRoads", "ClientKit",
            "EnRouteNotifications", "EnRouteAPNs", "NotificationsKit",
        ],
        exclude: ["Fixtures"],
        swiftSettings: settings),
    /// Two and three nodes on one store, each stepping its own relay, dispatch heartbeat and reconciler on a manual
    /// clock (with presence in Redis when `ENROUTE_TEST_REDIS_URL` is set). `make test` runs it on its own.
    .testTarget(
        name: "EnRouteClusterTests",
        dependencies: [
            "EnRouteDomain", "EnRouteBackend", "EnRouteSandbox", "EnRouteRedis", "RedisClient", "HTTPTransport",
            "EnRouteModels", "TestSupport",
        ],
        swiftSettings: settings),
    .testTarget(
        name: "EnRouteNotificationsTests",
        dependencies: [
            "EnRouteNotifications", "NotificationsKit", "EnRouteDomain", "EnRouteAPI", "EnRouteAPNs", "EnRouteSQLite",
            "EnRouteBackend", "EnRouteCrypto", "HTTPEngine", "EnRouteModels", "HTTPTransport", "TestSupport",
        ],
        swiftSettings: settings),
    .testTarget(
        name: "NotificationsKitTests",
        dependencies: [
            "NotificationsKit", "EnRouteNotifications", "EnRouteAPI", "EnRouteBackend", "HTTPTransport",
            "EnRouteModels", "TestSupport",
        ],
        swiftSettings: settings),
    /// The transport without a server: the SSE parser and the lock.
    .testTarget(name: "HTTPTransportTests", dependencies: ["HTTPTransport"], swiftSettings: settings),
    .testTarget(
        name: "ClientKitTests",
        dependencies: ["ClientKit", "HTTPTransport", "CurlTransport", "TestSupport", "EnRouteSandbox"],
        swiftSettings: settings),
    .testTarget(
        name: "EnRouteWebTests",
        dependencies: [
            "EnRouteWeb", "EnRouteBackend", "EnRouteDomain", "EnRouteAPI", "EnRouteModels", "HTTPEngine", "Routing",
            "EnRouteRoads", "HTTPTransport", "CurlTransport", "TestSupport",
        ],
        swiftSettings: settings),
    .testTarget(
        name: "OrderTrackingTests", dependencies: ["OrderTracking", "HTTPTransport", "TestSupport"],
        swiftSettings: settings),
    .testTarget(
        name: "RideHailingTests", dependencies: ["RideHailing", "RideHailingPreviews", "HTTPTransport", "TestSupport"],
        swiftSettings: settings),
    .testTarget(
        name: "ProviderKitTests",
        dependencies: ["ProviderKit", "TestSupport", "EnRouteModels", "HTTPTransport", "EnRouteCrypto"],
        swiftSettings: settings),
    /// The OSM PBF reader against the shipped extracts (counts from osmium) and malformed files.
    .testTarget(name: "OSMPBFTests", dependencies: ["OSMPBF"], swiftSettings: settings),
    .testTarget(
        name: "EnRouteRoadsTests",
        dependencies: ["EnRouteRoads", "EnRouteDomain", "EnRouteModels", "Routing", "TestSupport", "HTTPTransport"],
        swiftSettings: settings),
    /// The road network built from the shipped OSM extracts: counts, one-ways, restrictions, islands, CH = Dijkstra.
    .testTarget(
        name: "RoadBuilderTests", dependencies: ["RoadBuilder", "Routing", "OSMPBF", "TestSupport"],
        swiftSettings: settings),
    /// The Stripe gateway against the Stripe stand-in over loopback, and webhook signatures.
    .testTarget(
        name: "EnRouteStripeTests",
        dependencies: [
            "EnRouteStripe", "EnRouteDomain", "HTTPTransport", "CurlTransport", "HTTPEngine", "TestSupport",
        ],
        swiftSettings: settings),
    /// The `enroute` executable's option parsing and commands, through `@testable import enroute`.
    .testTarget(
        name: "enrouteTests",
        dependencies: [
            "enroute", "EnRouteSQLite", "EnRouteDomain", "RoadBuilder", "Routing", "HTTPTransport", "CitySimulator",
            "TestSupport",
        ], swiftSettings: settings),
    /// The RESP parser without a server; the client against a real Redis (`ENROUTE_TEST_REDIS_URL`) and through
    /// `TCPFaultProxy`.
    .testTarget(name: "RedisClientTests", dependencies: ["RedisClient", "TestSupport"], swiftSettings: settings),
    /// One `ProviderLocations` contract run against `ProviderPresence` in memory and `RedisProviderLocations` on a real
    /// Redis;
    /// two nodes whose live bus is `RedisLiveBus`.
    .testTarget(
        name: "EnRouteRedisTests",
        dependencies: [
            "EnRouteRedis", "EnRouteDomain", "EnRouteModels", "RedisClient", "TestSupport",
            "EnRouteBackend", "HTTPTransport", "EnRouteSandbox",
        ],
        swiftSettings: settings),
    /// The simulator's pure parts: speeds, noise, faults, the report's figures from synthetic observations.
    .testTarget(name: "CitySimulatorTests", dependencies: ["CitySimulator", "EnRouteModels"], swiftSettings: settings),
]
