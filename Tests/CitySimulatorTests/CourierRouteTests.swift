import Foundation
import Testing
import EnRouteModels
import ProviderKit
@testable import CitySimulator

/// Which trip a simulated courier carrying orders advances next: the planned stops, judged by the phone's own trips.
@Suite struct CourierRouteTests {
    static let here = Coordinate(lat: 39.29, lng: -76.61)

    /// A delivery `id` the server last saw at `server`, showing `shown` on the phone.
    static func order(_ id: String, _ server: String, shown: String? = nil, kind: String = "delivery") -> LocalTrip {
        let date = Date(timeIntervalSince1970: 1_780_000_000)
        let snapshot = TripSnapshot(
            id: id, kind: kind, version: 1, status: server, problem: nil, pickup: here, dropoff: here,
            providerId: "p", merchantId: nil, merchantStep: nil, readyAt: nil, items: nil, productID: nil,
            etaEarliest: nil, etaLatest: nil, cancelledBy: nil, cancelReason: nil, createdAt: date, updatedAt: date)
        return LocalTrip(server: snapshot, displayedStatus: shown)
    }

    static func stop(_ id: String, _ stop: RouteStop) -> PlannedStop {
        PlannedStop(tripId: id, stop: stop, at: here, secondsFromPrevious: 60)
    }

    static func target(_ id: String, _ stop: RouteStop) -> CourierRoute.Target { .init(tripId: id, stop: stop) }

    /// Collect B, hand over A, hand over B.
    static let plan = [stop("B", .pickup), stop("A", .dropoff), stop("B", .dropoff)]

    @Test func theFirstPlannedStopIsNextEvenForTheOrderTakenSecond() {
        let next = CourierRoute.next(plan: Self.plan, trips: [Self.order("A", "onTheWay"), Self.order("B", "picking")])
        #expect(next == Self.target("B", .pickup))
    }

    /// The phone shows B collected before the server's trimmed stops arrive: the stale pickup is passed over.
    @Test func aStepShownOnThePhoneMakesItsStop() {
        let trips = [Self.order("A", "onTheWay"), Self.order("B", "picking", shown: "onTheWay")]
        #expect(CourierRoute.next(plan: Self.plan, trips: trips) == Self.target("A", .dropoff))
    }

    @Test func aHandedOverOrCancelledOrderDropsOutOfThePlan() {
        let delivered = [Self.order("A", "arriving", shown: "delivered"), Self.order("B", "onTheWay")]
        #expect(CourierRoute.next(plan: Self.plan, trips: delivered) == Self.target("B", .dropoff))
        let cancelled = [Self.order("A", "onTheWay"), Self.order("B", "cancelled", shown: "picking")]
        #expect(CourierRoute.next(plan: Self.plan, trips: cancelled) == Self.target("A", .dropoff))
    }

    /// One order (or a ride) is driven by its own status; a plan naming none of the trips carried is ignored.
    @Test func withoutAPlanTheFirstTripCarriedLeads() {
        #expect(CourierRoute.next(plan: nil, trips: [Self.order("A", "picking")]) == Self.target("A", .pickup))
        let ride = Self.order("R", "driverArrived", kind: "ride")
        #expect(CourierRoute.next(plan: Self.plan, trips: [ride]) == Self.target("R", .dropoff))
        #expect(CourierRoute.next(plan: Self.plan, trips: [Self.order("A", "delivered")]) == nil)
    }

    /// A drop-off planned for an order not yet collected leads to its pickup.
    @Test func aPlannedDropOffOfAnUncollectedOrderLeadsToItsPickup() {
        let plan = [Self.stop("B", .dropoff)]
        #expect(CourierRoute.next(plan: plan, trips: [Self.order("B", "placed")]) == Self.target("B", .pickup))
    }
}
