import Foundation
import Testing
import EnRouteDomain
import EnRouteModels
import OrderTracking
@testable import EnRouteWeb

/// A shared delivery whose courier carries another order: the page says how many stops come first, by the ETA.
@Suite struct ShareStopsBeforeTests {
    static let now = Date(timeIntervalSince1970: 1_792_521_480)
    static let home = Coordinate(lat: 60.17, lng: 24.94)

    /// Order O1 with courier r1 in `status`; `otherFirst` puts order O2's drop-off before O1's.
    func order(_ status: DeliveryStatus = .onTheWay, otherFirst: Bool) -> TripRecord {
        var trip = TripRecord(
            id: "O1", kind: .delivery, status: .delivery(status), customerId: "c1",
            pickup: Coordinate(lat: 60.16, lng: 24.93), dropoff: Self.home,
            createdAt: Self.now.addingTimeInterval(-600))
        trip.providerId = "r1"
        trip.etaEarliest = Self.now.addingTimeInterval(300)
        trip.etaLatest = Self.now.addingTimeInterval(480)
        let other = PlannedStop(
            tripId: "O2", stop: .dropoff, at: Coordinate(lat: 60.18, lng: 24.95), secondsFromPrevious: 120)
        let own = PlannedStop(tripId: "O1", stop: .dropoff, at: Self.home, secondsFromPrevious: 200)
        trip.stops = otherFirst ? [other, own] : nil
        return trip
    }

    func view(_ trip: TripRecord) -> ShareView {
        let freshness = TrackingFreshnessPolicy(
            locale: Locale(identifier: "en_GB"), timeZone: TimeZone(identifier: "UTC")!)
        return ShareView.make(
            trip, wire: WireMapping(directory: StaticDirectory()), freshness: freshness, now: Self.now)
    }

    @Test func aDeliveryWithAStopBeforeItSaysSoNextToTheETA() throws {
        let shown = view(order(otherFirst: true))
        #expect(shown.stopsBefore == "1 stop before yours")
        #expect(shown.eta.hasPrefix("Arriving"))
        let json = try #require(
            try JSONSerialization.jsonObject(with: WireCoding.encoder().encode(shown)) as? [String: Any])
        #expect(json["stopsBefore"] as? String == "1 stop before yours")
    }

    @Test func theLineGoesOnceTheOtherOrderIsHandedOverAndTheStreamSendsTheChange() {
        let before = view(order(otherFirst: true))
        let after = view(order(otherFirst: false))
        #expect(after.stopsBefore == nil)
        #expect(after.differs(from: before))
    }

    @Test func anEndedDeliverySaysNothingOfStops() {
        #expect(view(order(.delivered, otherFirst: true)).stopsBefore == nil)
    }

    @Test func thePageDrawsTheLineTheServerWords() {
        let html = SharePage.html(title: "On the way")
        #expect(html.contains(#"<p id="stops"></p>"#))
        #expect(html.contains("getElementById('stops').textContent = s.stopsBefore || ''"))
    }
}
