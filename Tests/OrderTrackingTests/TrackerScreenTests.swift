import Foundation
import Testing
@testable import OrderTracking

@Suite struct TrackerScreenTests {
    @Test func rendersStepsETAPinAndBanner() {
        let fix = RiderFix(coordinate: .init(lat: 52.52, lng: 13.4), recordedAt: Fixture.t0)
        let state = OrderTrackingViewState(
            title: "On the way",
            steps: [
                .init(step: .placed, progress: .done), .init(step: .picking, progress: .done),
                .init(step: .onTheWay, progress: .current), .init(step: .arriving, progress: .upcoming),
                .init(step: .delivered, progress: .upcoming),
            ],
            eta: "Arriving 18:42–18:46", riderPin: .stale(fix, label: "Updated 40 s ago"), banner: "Rider delayed",
            destination: Fixture.home, cameraFollows: true)
        #expect(
            TrackerScreen.render(state, offline: true) == [
                "On the way",
                "  [x] Order placed",
                "  [x] Picking your items",
                "  [>] On the way",
                "  [ ] Arriving",
                "  [ ] Delivered",
                "Arriving 18:42–18:46",
                "Rider: Updated 40 s ago at 52.52000, 13.40000",
                "! Rider delayed",
                "Offline",
            ])
    }

    @Test func rendersTheLoadingScreenWithoutGuesses() {
        let state = OrderTrackingViewState(
            title: "Getting your order…", steps: [], eta: "", riderPin: .hidden, banner: nil,
            destination: nil, cameraFollows: true)
        #expect(TrackerScreen.render(state, offline: false) == ["Getting your order…"])
    }
}
