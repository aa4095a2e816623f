// swift-tools-version:6.0
import PackageDescription

// The rider app's sources, as packages Xcode and xcodebuild build for iOS; project.yml makes the runnable app, its
// notification service extension and its widget extension from the same directories (see README.md).

/// The parent package's settings: Swift 6 mode, explicit `any`, internal imports.
let settings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "RiderApp",
    platforms: [.iOS(.v17)],
    products: [
        .library(name: "RiderApp", targets: ["RiderApp"]),
        .library(name: "RiderNotificationService", targets: ["RiderNotificationService"]),
        .library(name: "RiderLiveActivity", targets: ["RiderLiveActivity"]),
    ],
    dependencies: [.package(name: "EnRoute", path: "../..")],
    targets: [
        /// The app: ride request and tracking, order tracking with its Live Activity, notifications.
        .target(
            name: "RiderApp",
            dependencies: [
                .product(name: "AppleAdapters", package: "EnRoute"),
                .product(name: "ClientKit", package: "EnRoute"),
                .product(name: "EnRouteModels", package: "EnRoute"),
                .product(name: "HTTPTransport", package: "EnRoute"),
                .product(name: "NotificationsKit", package: "EnRoute"),
                .product(name: "OrderTracking", package: "EnRoute"),
                .product(name: "RideHailing", package: "EnRoute"),
            ],
            swiftSettings: settings),
        /// The notification service extension: opens the sealed text, attaches the photo.
        .target(
            name: "RiderNotificationService",
            dependencies: [.product(name: "AppleAdapters", package: "EnRoute")],
            swiftSettings: settings),
        /// The widget extension: draws the delivery's Live Activity.
        .target(
            name: "RiderLiveActivity",
            dependencies: [
                .product(name: "OrderTrackingActivity", package: "EnRoute"),
                .product(name: "OrderTracking", package: "EnRoute"),
            ],
            swiftSettings: settings),
    ]
)
