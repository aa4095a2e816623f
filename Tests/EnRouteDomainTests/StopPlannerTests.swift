import Foundation
import Testing
import EnRouteDomain
import EnRouteModels

/// Points on one street: `x` is seconds of driving from its start, so routes read as sums.
private func at(_ x: Double) -> Coordinate { Coordinate(lat: 39.29, lng: -76.6 + x / 100_000) }
private func seconds(_ a: Coordinate, _ b: Coordinate) -> Double { (abs(a.lng - b.lng) * 100_000).rounded() }

private func order(
    _ id: String, _ pickup: Double, _ dropoff: Double, readyIn: Double = 0, picked: Bool = false
) -> StopPlanner.Order {
    StopPlanner.Order(tripId: id, pickup: at(pickup), dropoff: at(dropoff), readyIn: readyIn, pickedUp: picked)
}

@Suite struct StopPlannerTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        var planner = StopPlanner(capacity: 2, limit: 300, stopSeconds: 0)
        let courier: Double
        let carrying: [StopPlanner.Order]
        let new: StopPlanner.Order
        var fresh: Double? = nil
        /// The stops expected, as "a+" (collect a) and "a-" (hand a over); nil: it does not fit.
        let expected: [String]?
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(
            name: "a second order from the same merchant going the same way rides along", courier: 0,
            carrying: [order("a", 100, 500)], new: order("b", 100, 600), expected: ["a+", "b+", "a-", "b-"]),
        Case(
            name: "an order whose customer is on the way is handed over first", courier: 0,
            carrying: [order("a", 100, 900)], new: order("b", 100, 400), expected: ["a+", "b+", "b-", "a-"]),
        Case(
            name: "an order the other way: the first customer or the second would wait past the limit", courier: 0,
            carrying: [order("a", 100, 600)], new: order("b", 100, -300), fresh: 500, expected: nil),
        Case(
            name: "a detour within the limit is taken", courier: 0,
            carrying: [order("a", 100, 400)], new: order("b", 200, 500), expected: ["a+", "b+", "a-", "b-"]),
        Case(
            name: "at capacity nothing more is added", planner: StopPlanner(capacity: 1, limit: 300, stopSeconds: 0),
            courier: 0, carrying: [order("a", 100, 500)], new: order("b", 100, 600), expected: nil),
        Case(
            name: "an order collected already keeps only its drop-off", courier: 100,
            carrying: [order("a", 100, 500, picked: true)], new: order("b", 200, 600),
            expected: ["b+", "a-", "b-"]),
        Case(
            name: "the second customer waiting longer than a courier of its own plus the limit: refused", courier: 0,
            carrying: [order("a", 100, 600)], new: order("b", 700, 800), fresh: 100, expected: nil),
        Case(
            name: "a merchant still preparing: the first order is handed over before coming back for the second",
            courier: 0, carrying: [order("a", 100, 300)], new: order("b", 100, 400, readyIn: 500),
            expected: ["a+", "a-", "b+", "b-"]),
        Case(
            name: "time at each stop counts: stops of 400 s push a fitting detour past both limits",
            planner: StopPlanner(capacity: 2, limit: 300, stopSeconds: 400), courier: 0,
            carrying: [order("a", 100, 400)], new: order("b", 200, 500), fresh: 700, expected: nil),
    ]

    @Test(arguments: cases)
    func insertion(_ c: Case) {
        let plan = c.planner.insert(
            c.new, into: [], carrying: c.carrying, from: at(c.courier), freshArrival: c.fresh, seconds: seconds)
        #expect(plan?.stops.map { $0.tripId + ($0.stop == .pickup ? "+" : "-") } == c.expected)
    }

    @Test func theAddedTimeIsTheFirstCustomersDelay() throws {
        let plan = try #require(
            StopPlanner(capacity: 2, limit: 300, stopSeconds: 0).insert(
                order("b", 200, 500), into: [], carrying: [order("a", 100, 400)], from: at(0), freshArrival: nil,
                seconds: seconds))
        // Alone: a at 400 s. Stacked: 0 → 100 → 200 → 400 (a) → 500 (b), so a is not delayed, and b arrives at 500.
        #expect(plan.addedSeconds == 0)
        #expect(plan.arrivals == ["a": 400, "b": 500])
        #expect(plan.stops.map(\.secondsFromPrevious) == [100, 100, 200, 100])
    }

    @Test func aCourierCarryingTwoKeepsTheirOrderWhenAThirdIsAdded() throws {
        let current = [
            PlannedStop(tripId: "a", stop: .dropoff, at: at(300), secondsFromPrevious: 300),
            PlannedStop(tripId: "b", stop: .dropoff, at: at(600), secondsFromPrevious: 300),
        ]
        let plan = try #require(
            StopPlanner(capacity: 3, limit: 300, stopSeconds: 0).insert(
                order("c", 400, 700), into: current,
                carrying: [order("a", 0, 300, picked: true), order("b", 0, 600, picked: true)], from: at(0),
                freshArrival: nil, seconds: seconds))
        #expect(plan.stops.map(\.tripId) == ["a", "c", "b", "c"])
    }
}

@Suite struct StopsBeforeTests {
    private func trip(_ id: String, _ status: DeliveryStatus, stops: [PlannedStop]?) -> TripRecord {
        var t = TripRecord(
            id: id, kind: .delivery, status: .delivery(status), customerId: "c-\(id)", pickup: at(100),
            dropoff: at(id == "a" ? 400 : 500), createdAt: Date(timeIntervalSince1970: 0))
        t.providerId = "courier"
        t.stops = stops
        return t
    }

    private let plan = [
        PlannedStop(tripId: "a", stop: .pickup, at: at(100), secondsFromPrevious: 100),
        PlannedStop(tripId: "b", stop: .pickup, at: at(100), secondsFromPrevious: 0),
        PlannedStop(tripId: "a", stop: .dropoff, at: at(400), secondsFromPrevious: 300),
        PlannedStop(tripId: "b", stop: .dropoff, at: at(500), secondsFromPrevious: 100),
    ]

    @Test func eachCustomerCountsTheOtherOrdersStopsBeforeTheirs() {
        #expect(trip("a", .picking, stops: plan).stopsBefore == 1)
        #expect(trip("b", .picking, stops: plan).stopsBefore == 2)
        #expect(trip("b", .picking, stops: nil).stopsBefore == 0)
        var unassigned = trip("b", .placed, stops: nil)
        unassigned.providerId = nil
        #expect(unassigned.stopsBefore == nil)
        #expect(trip("b", .delivered, stops: nil).stopsBefore == nil)
    }

    @Test func stopsMadeLeaveThePlanUntilOneOrderIsLeft() {
        var a = trip("a", .onTheWay, stops: plan)
        var b = trip("b", .onTheWay, stops: plan)
        // Both collected: each pickup is made.
        var left = StopPlan.remaining(plan, trips: ["a": a, "b": b], courier: "courier")
        #expect(left?.map(\.tripId) == ["a", "b"])
        b.stops = left
        #expect(b.stopsBefore == 1)
        // a handed over: b is carried alone, with nothing before it.
        a = trip("a", .delivered, stops: left)
        left = StopPlan.remaining(plan, trips: ["a": a, "b": b], courier: "courier")
        #expect(left == nil)
        b.stops = left
        #expect(b.stopsBefore == 0)
    }

    @Test func anOrderTakenFromTheCourierLeavesTheirPlan() {
        var a = trip("a", .picking, stops: plan)
        a.providerId = nil
        #expect(
            StopPlan.remaining(plan, trips: ["a": a, "b": trip("b", .picking, stops: plan)], courier: "courier")
                == nil)
    }

    @Test func theApproachDrivesThroughTheOtherOrdersStopsFirst() throws {
        let b = trip("b", .onTheWay, stops: Array(plan.dropFirst(2)))
        let approach = try #require(b.stackedApproach)
        #expect(approach.first == at(400))
        #expect(approach.after == 100)
        #expect(approach.stops == 1)
        #expect(trip("a", .onTheWay, stops: Array(plan.dropFirst(2))).stackedApproach == nil)
        #expect(trip("b", .picking, stops: plan).stackedRide?.seconds == 400)
    }
}
