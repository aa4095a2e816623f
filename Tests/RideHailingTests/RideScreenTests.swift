import Foundation
import Testing
import EnRouteModels
@testable import RideHailing

@Suite struct RideScreenTests {
    @Test func showsTheTripDriverETAFareAndTheMarker() {
        var state = TripViewState()
        var trip = Fixtures.trip(.driverAssigned, version: 4, eta: 250)
        trip.fare = Money(amountMinor: 1205, currency: "EUR")
        state.trip = trip
        let marker = MarkerFrame(coordinate: Coordinate(lat: 60.171234, lng: 24.94), heading: 92, isAnimating: true)

        #expect(
            RideScreen.render(state, marker: marker) == [
                "Trip T-1 · Driver on the way (v4)",
                "Driver: Mehmet · Toyota Prius ABC-123 · ★ 4.9",
                "Pickup in 4 min 10 s",
                "Fare: EUR 12.05",
                "Car: 60.17123, 24.94000 → 92° E (moving)",
            ])
    }

    @Test func aRideBookedAheadShowsItsTimeUntilItsSearchBegins() {
        var state = TripViewState()
        var trip = Fixtures.trip(.searching, version: 1, eta: nil)
        trip.scheduledFor = Date(timeIntervalSince1970: 1_792_526_400)
        state.trip = trip
        #expect(RideScreen.render(state, marker: nil).first == "Trip T-1 · Booked for 2026-10-20T20:00:00Z (v1)")
        trip.matchingStartedAt = Date(timeIntervalSince1970: 1_792_525_500)
        state.trip = trip
        #expect(RideScreen.render(state, marker: nil).first == "Trip T-1 · Finding your driver… (v1)")
    }

    @Test func beforeATripShowsTheEstimates() {
        var state = TripViewState()
        state.estimates = [
            Estimate(productID: "economy", fare: Money(amountMinor: 900, currency: "USD"), etaSeconds: 120),
            Estimate(productID: "xl", fare: Money(amountMinor: 1500, currency: "JPY"), etaSeconds: 45),
        ]
        #expect(
            RideScreen.render(state, marker: nil) == [
                "Choose a ride:",
                "  economy: USD 9.00, pickup in 2 min",
                "  xl: JPY 1500, pickup in 45 s",
            ])
    }

    @Test func showsProgressAndErrors() {
        var state = TripViewState()
        state.isRequesting = true
        state.errorMessage = "Could not request a ride. Try again."
        #expect(
            RideScreen.render(state, marker: nil) == ["Requesting a ride…", "! Could not request a ride. Try again."])
    }

    @Test func aFinishedTripShowsNoETA() {
        var state = TripViewState()
        state.trip = Fixtures.trip(.completed, version: 9, eta: 0)
        #expect(RideScreen.render(state, marker: nil).contains { $0.contains("in ") } == false)
    }

    @Test(arguments: [(0.0, "N"), (44, "NE"), (181, "S"), (300, "NW"), (359, "N")])
    func headingsReadAsCompassPoints(heading: Double, name: String) {
        #expect(RideScreen.compass(heading) == name)
    }
}

/// The money lines of `enroute ride`'s screen.
@Suite struct RideScreenMoneyTests {
    @Test func aReceiptListsItsLinesTheTotalAndTheCard() {
        var receipt = Fixtures.receipt(tip: 200)
        receipt = Receipt(
            tripId: receipt.tripId, kind: receipt.kind, payment: .partiallyCaptured,
            lines: receipt.lines + [
                PriceLine(kind: "adjustment", label: "Adjustment", amount: Fixtures.eur(-100), reason: "Route blocked")
            ],
            total: Fixtures.eur(1350), card: receipt.card, requestedAt: receipt.requestedAt, startedAt: nil,
            endedAt: nil, route: nil)
        #expect(
            RideScreen.receipt(receipt) == [
                "Receipt for trip T-1",
                "  Base fare                 EUR 3.00",
                "  Distance 4.2 km           EUR 6.30",
                "  Time 11 min               EUR 3.20",
                "  Tip                       EUR 2.00",
                "  Adjustment                EUR -1.00 (Route blocked)",
                "  Total                     EUR 13.50",
                "Paid with Visa ···· 4242 · paid",
            ])
    }
}
