import Foundation
import Synchronization
import Testing
import EnRouteModels
import EnRouteDomain
import TestSupport

/// Where each active trip's provider is: fixes move the trip in memory and reach its watchers, older fixes and other
/// nodes' older versions are ignored, and the kept fixes are told to the listeners.
@Suite struct LiveTripsTests {
    static let t0 = Date(timeIntervalSince1970: 1_800_000_000)
    static let pickup = Coordinate(lat: 60.1699, lng: 24.9384)

    /// A service on a manual clock with a ride assigned to p1.
    static func assigned() async throws -> (TripService, ManualClock, TripRecord) {
        let clock = ManualClock()
        let service = TripService(
            store: InMemoryTripStore(), directory: TestDirectory.helsinki, ids: SequentialIDGenerator(prefix: "T"),
            now: { clock.date })
        let ride = try await service.requestRide(
            TripRequest(pickup: pickup, dropoff: Coordinate(lat: 60.1841, lng: 24.9497), productID: "economy"),
            by: Account(id: "c1", role: .customer))
        let trip = try await service.move(ride.id, .assignProvider("p1"), by: Account(id: "p1", role: .provider))
        return (service, clock, trip)
    }

    static func fix(_ metresNorth: Double, at date: Date) -> LocationFix {
        LocationFix(
            lat: pickup.lat + metresNorth / 111_195, lng: pickup.lng, heading: 0, speed: 8, accuracy: 5,
            recordedAt: date)
    }

    @Test func fixesMoveTheTripInOrderAndAnOlderOneIsSkipped() async throws {
        let (service, clock, trip) = try await Self.assigned()
        let told = Mutex<[[LocationFix]]>([])
        service.live.onFixes { _, fixes in told.withLock { $0.append(fixes) } }
        let at = clock.date
        let first = service.live.recordFixes(
            [Self.fix(300, at: at), Self.fix(200, at: at.addingTimeInterval(5))], provider: "p1")
        #expect(first?.providerFix?.seq == 2)
        #expect(first?.providerFix?.recordedAt == at.addingTimeInterval(5))
        // A fix no newer than the trip's changes nothing and is told to no one.
        #expect(service.live.recordFixes([Self.fix(250, at: at.addingTimeInterval(1))], provider: "p1") == nil)
        #expect(told.withLock { $0.map(\.count) } == [2])
        // Nothing is written: the store still holds the version without a fix.
        #expect(try service.store.trip(id: trip.id)?.providerFix == nil)
        #expect(try service.cached(trip.id)?.providerFix?.seq == 2)
        // A provider with no active trip moves nothing.
        #expect(service.live.recordFixes([Self.fix(100, at: at.addingTimeInterval(9))], provider: "p2") == nil)
    }

    @Test func anotherNodesVersionIsKeptWithTheNewerFixHeldHere() async throws {
        let (service, clock, trip) = try await Self.assigned()
        let changes = Mutex<[Int]>([])
        service.onChange { _, new in changes.withLock { $0.append(new.version) } }
        service.live.recordFixes([Self.fix(300, at: clock.date)], provider: "p1")
        var arrived = trip
        arrived.status = .ride(.driverArrived)
        arrived.version = trip.version + 1
        service.live.absorb(arrived)
        let held = try #require(try service.cached(trip.id))
        #expect(held.status == .ride(.driverArrived))
        #expect(held.providerFix?.seq == 1, "the fix held here stays on the other node's version")
        // An older version, or the same one again, is not taken.
        service.live.absorb(trip)
        service.live.absorb(arrived)
        #expect(try service.cached(trip.id)?.status == .ride(.driverArrived))
        #expect(changes.withLock { $0 } == [arrived.version])
    }

    @Test func ratingsAverageTheCustomersStarsAndEachPartyRatesOnce() async throws {
        let (service, _, trip) = try await Self.assigned()
        let provider = Account(id: "p1", role: .provider), customer = Account(id: "c1", role: .customer)
        await #expect(throws: TripError.self) {
            _ = try await service.feedback.rate(trip.id, stars: 5, comment: nil, by: customer)
        }
        for step in [TripMove.ride(.driverArrived), .ride(.onTrip), .ride(.completed)] {
            _ = try await service.move(trip.id, step, by: provider)
        }
        #expect(service.feedback.averageRating(provider: "p1") == nil)
        _ = try await service.feedback.rate(trip.id, stars: 4, comment: "kind", by: customer)
        _ = try await service.feedback.rate(trip.id, stars: 2, comment: nil, by: provider)
        #expect(service.feedback.averageRating(provider: "p1") == 4)
        await #expect(throws: TripError.self) {
            _ = try await service.feedback.rate(trip.id, stars: 1, comment: nil, by: customer)
        }
        #expect(service.feedback.averageRating(provider: "p1") == 4)
        // Without payments there is no tip to give.
        await #expect(throws: TripError.forbidden("This server takes no payments.")) {
            _ = try await service.feedback.tip(trip.id, amountMinor: 100, by: customer, idempotency: nil)
        }
    }
}
