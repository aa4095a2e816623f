// swift-tools-version:6.0
import PackageDescription

/// One set of settings for every target: Swift 6 mode, explicit `any`, internal imports.
let settings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "EnRoute",
    platforms: [.macOS(.v14), .iOS(.v17)],
    products: [
        .library(name: "OrderTracking", targets: ["OrderTracking"]),
        .library(name: "RideHailing", targets: ["RideHailing"]),
        .library(name: "RideHailingPreviews", targets: ["RideHailingPreviews"]),
        .library(name: "AppleAdapters", targets: ["AppleAdapters"]),
    ],
    targets: []
)

// MARK: - C libraries (each wrapped by exactly one Swift module)

package.targets += [
    .systemLibrary(name: "CMicroHTTPD", pkgConfig: "libmicrohttpd", providers: [.apt(["libmicrohttpd-dev"])]),
    .systemLibrary(name: "COpenSSL", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
    .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
    .systemLibrary(name: "CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
    /// Puts problem+json bodies in place of libmicrohttpd's built-in HTML error pages (part of the HTTPEngine wrapper).
    .target(name: "CMicroHTTPDErrors", dependencies: ["CMicroHTTPD"]),
]

// MARK: - Shared

package.targets += [
    /// Wire types used by the server and every client: one definition each.
    .target(name: "EnRouteModels", swiftSettings: settings),
    /// OpenSSL's libcrypto behind a small Swift surface (SHA-1, HMAC, JWT signing).
    .target(name: "EnRouteCrypto", dependencies: ["COpenSSL"], swiftSettings: settings),
    /// SQLite behind a small Swift surface (connection, statements, transactions), for the server's stores and the provider's device store.
    .target(name: "SQLiteKit", dependencies: ["CSQLite"], swiftSettings: settings),
]

// MARK: - Server

package.targets += [
    /// libmicrohttpd behind async handlers, a router, SSE and WebSocket.
    .target(name: "HTTPEngine", dependencies: ["CMicroHTTPD", "CMicroHTTPDErrors", "EnRouteCrypto", "EnRouteModels"], swiftSettings: settings),
    /// The trip service: domain, state machines, idempotency, authorization and the HTTP API.
    .target(name: "EnRouteServer", dependencies: ["EnRouteModels", "HTTPEngine", "EnRouteCrypto"], swiftSettings: settings),
    /// SQLite adapters for the server's repositories.
    .target(name: "EnRouteStorage", dependencies: ["SQLiteKit", "EnRouteServer", "EnRouteModels"], swiftSettings: settings),
]

// MARK: - Client

package.targets += [
    /// The client kit's transport contract (HTTPClient, SSE parsing) and its URLSession implementation.
    .target(name: "ClientKit", dependencies: ["EnRouteModels"], swiftSettings: settings),
    /// An HTTPClient over libcurl, for Linux tools and the simulator.
    .target(name: "CurlTransport", dependencies: ["CCurl", "ClientKit"], swiftSettings: settings),
    /// Seed 000: live order tracking for the customer.
    .target(name: "OrderTracking", dependencies: ["ClientKit", "EnRouteModels"], swiftSettings: settings),
    /// Seeds 002 and 003: the rider app and the ride tracking view model.
    .target(name: "RideHailing", dependencies: ["ClientKit", "EnRouteModels"], swiftSettings: settings),
    /// Fakes for SwiftUI previews and demos of the rider kit (seed 003's scripted ride); never in production wiring.
    .target(name: "RideHailingPreviews", dependencies: ["RideHailing", "EnRouteModels"], swiftSettings: settings),
    /// Seed 004: the provider's app logic (point buffer, step outbox, offers, session) and the merchant's orders.
    .target(name: "ProviderKit", dependencies: ["ClientKit", "EnRouteModels", "SQLiteKit"], swiftSettings: settings),
    /// SwiftUI, MapKit and ActivityKit adapters; compiled only on Apple platforms.
    .target(name: "AppleAdapters", dependencies: ["OrderTracking", "RideHailing", "NotificationsKit", "ProviderKit"], swiftSettings: settings),
]

// MARK: - Notifications (seed 001)

package.targets += [
    /// Push notifications on the server: devices, opens, the push outbox and its sender, APNs over HTTP/2.
    .target(name: "EnRouteNotifications",
            dependencies: ["EnRouteServer", "EnRouteStorage", "EnRouteModels", "EnRouteCrypto", "HTTPEngine", "CCurl"],
            swiftSettings: settings),
    /// Seed 001: the client's notification logic (permission, registration, taps, routes, the service extension).
    .target(name: "NotificationsKit", dependencies: ["ClientKit", "EnRouteModels", "EnRouteCrypto"], swiftSettings: settings),
    .testTarget(name: "EnRouteNotificationsTests",
                dependencies: ["EnRouteNotifications", "NotificationsKit", "EnRouteServer", "EnRouteStorage", "EnRouteCrypto",
                               "HTTPEngine", "EnRouteModels", "ClientKit", "TestSupport"],
                exclude: ["Fixtures"],
                swiftSettings: settings),
    .testTarget(name: "NotificationsKitTests",
                dependencies: ["NotificationsKit", "EnRouteNotifications", "ClientKit", "EnRouteCrypto", "EnRouteModels", "TestSupport"],
                swiftSettings: settings),
]

// MARK: - Tools

package.targets += [
    .executableTarget(
        name: "enroute",
        dependencies: ["EnRouteServer", "EnRouteStorage", "HTTPEngine", "EnRouteModels", "EnRouteCrypto", "EnRouteNotifications",
                       "OrderTracking", "RideHailing", "ClientKit", "CurlTransport", "ProviderKit"],
        resources: [.copy("Resources/openapi.yaml")],
        swiftSettings: settings
    ),
    /// The HTTP engine's benchmark harness (bench/http-engine.sh).
    .executableTarget(name: "engine-bench", dependencies: ["HTTPEngine"], swiftSettings: settings),
    /// The dispatch and live-location benchmarks' harness (bench/ingest.sh, bench/fanout.sh, bench/candidates.sh).
    .executableTarget(name: "server-bench", dependencies: ["EnRouteServer", "EnRouteStorage", "SQLiteKit", "EnRouteModels", "HTTPEngine"],
                      swiftSettings: settings),
]

// MARK: - Tests

package.targets += [
    /// Fixtures and fakes shared by the test targets: a manual clock, in-process servers.
    .target(name: "TestSupport", dependencies: ["EnRouteModels", "ClientKit", "HTTPEngine", "EnRouteServer"], swiftSettings: settings),
    .testTarget(name: "EnRouteModelsTests", dependencies: ["EnRouteModels"], swiftSettings: settings),
    .testTarget(name: "HTTPEngineTests", dependencies: ["HTTPEngine", "TestSupport", "EnRouteModels"], swiftSettings: settings),
    .testTarget(
        name: "EnRouteServerTests",
        dependencies: ["EnRouteServer", "EnRouteStorage", "HTTPEngine", "TestSupport", "EnRouteModels", "EnRouteCrypto", "ClientKit", "CurlTransport",
                       "EnRouteNotifications"],
        swiftSettings: settings
    ),
    .testTarget(name: "ClientKitTests", dependencies: ["ClientKit", "CurlTransport", "TestSupport"], exclude: ["Fixtures"], swiftSettings: settings),
    .testTarget(name: "OrderTrackingTests", dependencies: ["OrderTracking", "TestSupport"], swiftSettings: settings),
    .testTarget(name: "RideHailingTests", dependencies: ["RideHailing", "RideHailingPreviews", "TestSupport"], swiftSettings: settings),
    /// The `enroute` executable's option parsing and commands, through `@testable import enroute`.
    .testTarget(name: "enrouteTests", dependencies: ["enroute"], swiftSettings: settings),
    .testTarget(name: "ProviderKitTests", dependencies: ["ProviderKit", "TestSupport", "EnRouteModels", "ClientKit"], swiftSettings: settings),
]
