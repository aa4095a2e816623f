import Foundation
import Testing
import EnRouteModels
import EnRouteDomain
import EnRouteNotifications

/// A courier carrying two orders: the Live Activity push says how many stops for the other order come first, and
/// a change of that number is pushed even when the ETA holds.
@Suite struct StackedOrderPushTests {
    static let at = Date(timeIntervalSince1970: 1_792_521_480)
    static let home = Coordinate(lat: 60.17, lng: 24.94)
    static let shop = Coordinate(lat: 60.16, lng: 24.93)

    /// Order O1 on its way with courier r1, its card open; `otherFirst` puts order O2's drop-off before O1's.
    static func order(version: Int, otherFirst: Bool, at time: Date = at) -> TripRecord {
        var trip = TripRecord(
            id: "O1", kind: .delivery, status: .delivery(.onTheWay), customerId: "c1", pickup: shop, dropoff: home,
            createdAt: time.addingTimeInterval(-600))
        trip.version = version
        trip.providerId = "r1"
        trip.liveActivityToken = "a1b2c3d4e5f60718293a4b5c6d7e8f90"
        trip.etaEarliest = at.addingTimeInterval(300)
        trip.etaLatest = at.addingTimeInterval(480)
        trip.updatedAt = time
        let other = PlannedStop(
            tripId: "O2", stop: .dropoff, at: Coordinate(lat: 60.18, lng: 24.95), secondsFromPrevious: 120)
        let own = PlannedStop(tripId: "O1", stop: .dropoff, at: home, secondsFromPrevious: 200)
        trip.stops = otherFirst ? [other, own] : nil
        return trip
    }

    /// The Live Activity jobs `planner` queues for the change from `old` to `new`.
    func planned(_ planner: OrderPushPlanner, from old: TripRecord, to new: TripRecord) async throws -> [PushJob] {
        let store = InMemoryTripStore()
        try await store.transaction { tx in try await planner.tripChanged(from: old, to: new, in: tx) }
        return try await store.dueOutbox(topic: PushJob.topic, now: .distantFuture, limit: 100)
            .map { try PushJob.decode($0.payload) }.filter { $0.kind == .liveActivity }
    }

    @Test func theOtherOrderHandedOverPushesAnUpdateSayingNoStopsBeforeThoughTheETAHolds() async throws {
        let planner = OrderPushPlanner(directory: StaticDirectory())
        let before = Self.order(version: 5, otherFirst: true)
        #expect(before.stopsBefore == 1)
        let after = Self.order(version: 6, otherFirst: false, at: Self.at.addingTimeInterval(30))
        let jobs = try await planned(planner, from: before, to: after)
        let job = try #require(jobs.first)
        #expect(jobs.count == 1)
        #expect(job.event == "update")
        #expect(job.priority == 10)
        #expect(job.stopsBefore == 0)
        #expect(job.status == "onTheWay")
        #expect(job.etaLatest == Int(Self.at.addingTimeInterval(480).timeIntervalSince1970))
    }

    @Test func aChangeThatKeepsTheStopsAndTheETAPushesNothing() async throws {
        let planner = OrderPushPlanner(directory: StaticDirectory())
        let before = Self.order(version: 5, otherFirst: true)
        let after = Self.order(version: 6, otherFirst: true, at: Self.at.addingTimeInterval(30))
        #expect(try await planned(planner, from: before, to: after).isEmpty)
    }

    @Test func theLiveActivityPayloadsContentStateCarriesTheStopsBefore() throws {
        var job = PushJob(kind: .liveActivity, orderId: "O1", accountId: "c1", orderVersion: 6, expiresAt: Self.at)
        job.event = "update"; job.timestamp = 1_792_521_480; job.status = "onTheWay"; job.etaLatest = 1_792_521_960
        job.stopsBefore = 1
        let root = try #require(
            try JSONSerialization.jsonObject(with: Data(try PushPayloadBuilder().liveActivity(job))) as? [String: Any])
        let aps = try #require(root["aps"] as? [String: Any])
        let state = try #require(aps["content-state"] as? [String: Any])
        #expect(state["stopsBefore"] as? Int == 1)
        let decoded = try JSONDecoder().decode(
            OrderActivityContentState.self, from: JSONSerialization.data(withJSONObject: state))
        #expect(decoded == OrderActivityContentState(status: .onTheWay, etaLatest: 1_792_521_960, stopsBefore: 1))
    }
}
