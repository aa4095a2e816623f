// swift-tools-version:6.0
import PackageDescription

// The courier app's sources, as a package Xcode and xcodebuild build for iOS; project.yml makes the runnable app
// from the same directory (see README.md).

/// The parent package's settings: Swift 6 mode, explicit `any`, internal imports.
let settings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "CourierApp",
    platforms: [.iOS(.v17)],
    products: [
        .library(name: "CourierApp", targets: ["CourierApp"])
    ],
    dependencies: [.package(name: "EnRoute", path: "../..")],
    targets: [
        /// The app: going online, offers, turn-by-turn guidance, the trip's steps and proof of delivery.
        .target(
            name: "CourierApp",
            dependencies: [
                .product(name: "AppleAdapters", package: "EnRoute"),
                .product(name: "ClientKit", package: "EnRoute"),
                .product(name: "EnRouteModels", package: "EnRoute"),
                .product(name: "HTTPTransport", package: "EnRoute"),
                .product(name: "ProviderKit", package: "EnRoute"),
                .product(name: "RideHailing", package: "EnRoute"),
            ],
            swiftSettings: settings)
    ]
)
