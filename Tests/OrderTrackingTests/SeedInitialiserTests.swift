import Foundation
import Testing
import ClientKit
@testable import OrderTracking

/// Seed 000's cards build their parts with these exact calls; this file compiling is the proof that they still do.
/// Where the project added a parameter (a ticking or polling clock, a locale), it has a default.
///
/// Two cards cannot be built as the seed writes them, on purpose: `OrderLiveActivityEngine` also takes the
/// `ActivityController` and `AppLifecycle` the seed reaches through ActivityKit and UIKit (the adapters live in
/// AppleAdapters, and a default here would silently run an app without Live Activities), and
/// `RemoteOrderTrackingRepository` takes the `APIServer` (base URL and token) that the seed's `HTTPClient` knew itself.
@MainActor
@Suite struct SeedInitialiserTests {
    @Test func seed000sInitialisersCompileAsWritten() {
        let store = OrderTrackingStore(tracking: UnusedRepository(), status: OrderStatusPolicy())
        let viewModel = OrderTrackingViewModel(
            order: "O-1", store: store, freshness: TrackingFreshnessPolicy(),
            clock: SystemDateProvider())
        let engine = TrackingPollingEngine(
            tracking: FakeRefresher(), lifecycle: ManualAppLifecycle(phase: .background),
            network: ManualNetworkStatus(isOnline: false))
        #expect(viewModel.viewState.banner == nil)
        #expect(store.state(of: "O-1") == .unavailable)
        _ = engine
    }
}
