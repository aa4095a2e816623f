import Foundation
import Testing
@testable import OrderTracking

/// Rider fixes have their own guard: a position may be news when the status is not.
@MainActor @Suite struct OrderTrackingStoreRiderTests {
    @Test func aNewerFixAtTheSameVersionMovesThePin() throws {
        let store = OrderTrackingStore(tracking: UnusedRepository())
        store.apply(Fixture.snapshot(version: 5, fixAt: nil))
        #expect(store.apply(Fixture.snapshot(version: 5, fixAt: Fixture.at(18, 37, 55))))
        #expect(store.apply(Fixture.snapshot(version: 5, fixAt: Fixture.at(18, 38, 0))))
        guard case .loaded(let shown) = store.state(of: "8F3K") else { Issue.record("not loaded"); return }
        #expect(shown.rider?.recordedAt == Fixture.at(18, 38, 0))
    }

    @Test func anOlderFixOrAnOlderVersionNeverMovesThePinBack() throws {
        let store = OrderTrackingStore(tracking: UnusedRepository())
        store.apply(Fixture.snapshot(version: 5, fixAt: Fixture.at(18, 38, 0)))
        #expect(!store.apply(Fixture.snapshot(version: 5, fixAt: Fixture.at(18, 37, 0))))
        #expect(!store.apply(Fixture.snapshot(version: 4, fixAt: Fixture.at(18, 39, 0))))
        guard case .loaded(let shown) = store.state(of: "8F3K") else { Issue.record("not loaded"); return }
        #expect(shown.rider?.recordedAt == Fixture.at(18, 38, 0))
        #expect(shown.version == 5)
    }

    @Test func aLaterSnapshotAtTheSameVersionRefreshesTheETA() throws {
        let store = OrderTrackingStore(tracking: UnusedRepository())
        let early = Fixture.at(18, 42)...Fixture.at(18, 46), later = Fixture.at(18, 44)...Fixture.at(18, 49)
        store.apply(
            Fixture.snapshot(version: 5, eta: early, fixAt: Fixture.at(18, 38, 0), generatedAt: Fixture.at(18, 38, 5)))
        #expect(store.apply(Fixture.snapshot(version: 5, eta: later, fixAt: nil, generatedAt: Fixture.at(18, 39, 0))))
        #expect(!store.apply(Fixture.snapshot(version: 5, eta: early, generatedAt: Fixture.at(18, 38, 30))))
        guard case .loaded(let shown) = store.state(of: "8F3K") else { Issue.record("not loaded"); return }
        #expect(shown.eta == later)
        #expect(shown.generatedAt == Fixture.at(18, 39, 0))
        #expect(shown.rider?.recordedAt == Fixture.at(18, 38, 0), "a snapshot without a rider keeps the pin")
    }

    @Test func aFinishedOrderTakesNoMoreFixes() throws {
        let store = OrderTrackingStore(tracking: UnusedRepository())
        store.apply(Fixture.snapshot(version: 9, status: .delivered))
        #expect(!store.apply(Fixture.snapshot(version: 9, status: .delivered, fixAt: Fixture.at(18, 40, 0))))
    }
}
