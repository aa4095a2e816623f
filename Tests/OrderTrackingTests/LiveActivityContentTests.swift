import Foundation
import Testing
import EnRouteModels
@testable import OrderTracking

@Suite struct LiveActivityContentTests {
    static let stale = Date(timeIntervalSince1970: 1_792_521_660)

    @Test(arguments: [
        (OrderStatus.placed, OrderStatusWire.placed), (.picking, .picking), (.onTheWay, .onTheWay),
        (.arriving, .arriving), (.delivered, .delivered), (.cancelled(reason: "Out of stock"), .cancelled),
        (.problem(message: "Rider delayed"), .problem),
    ])
    func theCardCarriesTheWireStatusTheServerPushes(status: OrderStatus, wire: OrderStatusWire) {
        let content = LiveActivityContent(status: status, eta: nil, staleDate: Self.stale)
        #expect(content.contentState == OrderActivityContentState(status: wire, etaLatest: nil))
    }

    /// The server sends whole seconds rounded up; the app must write the same number for the same window.
    @Test func theLatestArrivalIsWholeSecondsRoundedUpAsTheServerSendsIt() {
        let earliest = Date(timeIntervalSince1970: 1_792_521_720)
        let latest = Date(timeIntervalSince1970: 1_792_521_959.25)
        let content = LiveActivityContent(status: .onTheWay, eta: earliest...latest, staleDate: Self.stale)
        #expect(content.contentState.etaLatest == 1_792_521_960)
    }
}
