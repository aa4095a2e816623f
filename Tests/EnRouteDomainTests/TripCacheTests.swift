import Foundation
import Testing
import EnRouteModels
import EnRouteDomain

/// The trips in memory: newest versions only, every active trip, a bounded tail of ended ones, and reads only for a
/// trip's parties.
@Suite struct TripCacheTests {
    static let t0 = Date(timeIntervalSince1970: 1_800_000_000)
    static let helsinki = Coordinate(lat: 60.1699, lng: 24.9384)

    static func ride(
        _ id: String, customer: String = "c1", provider: String? = nil, status: TripState = .searching,
        version: Int = 1, at offset: TimeInterval = 0, pickup: Coordinate = helsinki
    ) -> TripRecord {
        var trip = TripRecord(
            id: id, kind: .ride, status: .ride(status), customerId: customer, pickup: pickup,
            dropoff: Coordinate(lat: 60.1841, lng: 24.9497), createdAt: t0.addingTimeInterval(offset))
        trip.providerId = provider
        trip.version = version
        return trip
    }

    @Test func anOlderVersionNeverReplacesANewerOne() throws {
        let cache = TripCache(store: InMemoryTripStore(), endedLimit: 10)
        #expect(cache.remember(Self.ride("T1", provider: "p1", status: .driverAssigned, version: 2)))
        #expect(!cache.remember(Self.ride("T1", version: 1)))
        #expect(cache.inMemory("T1")?.version == 2)
        #expect(cache.activeTrips(provider: "p1").map(\.id) == ["T1"])
        #expect(cache.remember(Self.ride("T1", provider: "p1", status: .driverArrived, version: 2)))
        #expect(cache.inMemory("T1")?.status == .ride(.driverArrived))
    }

    @Test func aTripHandedToAnotherProviderLeavesTheFirstIdle() {
        let cache = TripCache(store: InMemoryTripStore(), endedLimit: 10)
        cache.remember(Self.ride("T1", provider: "p1", status: .driverAssigned, version: 2))
        #expect(!cache.isIdle(provider: "p1"))
        cache.remember(Self.ride("T1", provider: "p2", status: .driverAssigned, version: 3))
        #expect(cache.isIdle(provider: "p1"))
        #expect(!cache.isIdle(provider: "p2"))
        cache.remember(Self.ride("T1", provider: "p2", status: .completed, version: 4))
        #expect(cache.isIdle(provider: "p2"))
        #expect(cache.activeTrips(customer: "c1").isEmpty)
    }

    @Test func activeTripsAreListedNewestFirst() {
        let cache = TripCache(store: InMemoryTripStore(), endedLimit: 10)
        cache.remember([
            Self.ride("T1", at: 0), Self.ride("T3", at: 20), Self.ride("T2", at: 10),
            Self.ride("T4", customer: "c2", at: 30), Self.ride("T5", status: .cancelled, at: 40),
        ])
        #expect(cache.activeTrips(customer: "c1").map(\.id) == ["T3", "T2", "T1"])
        #expect(cache.activeTrips().map(\.id) == ["T4", "T3", "T2", "T1"])
    }

    @Test func endedTripsBeyondTheLimitLeaveMemoryOldestFirstAndAreReadFromTheStore() async throws {
        let store = InMemoryTripStore()
        let cache = TripCache(store: store, endedLimit: 2)
        cache.remember(Self.ride("A", status: .searching, at: 0))
        for (i, id) in ["E1", "E2", "E3"].enumerated() {
            let ended = Self.ride(id, status: .completed, at: Double(i))
            try await store.transaction { tx in try await tx.insert(ended) }
            cache.remember(ended)
        }
        #expect(cache.count == 3)
        #expect(cache.inMemory("E1") == nil)
        #expect(cache.inMemory("E2") != nil && cache.inMemory("E3") != nil)
        // The active trip is never dropped, however many end.
        #expect(cache.inMemory("A") != nil)
        // A dropped one is read from the store, and kept again.
        #expect(try cache.cached("E1")?.id == "E1")
        #expect(cache.inMemory("E1") != nil)
        #expect(try cache.cached("nope") == nil)
    }

    @Test func onlyATripsPartiesReadIt() throws {
        let cache = TripCache(store: InMemoryTripStore(), endedLimit: 10)
        cache.remember(Self.ride("T1", provider: "p1", status: .driverAssigned, version: 2))
        #expect(try cache.trip("T1", for: Account(id: "c1", role: .customer)).id == "T1")
        #expect(try cache.withTrip("T1", for: Account(id: "p1", role: .provider)) { $0.version } == 2)
        #expect(throws: TripError.notFound) { try cache.trip("T1", for: Account(id: "c2", role: .customer)) }
        #expect(throws: TripError.notFound) {
            try cache.withTrip("T1", for: Account(id: "p2", role: .provider)) { $0.version }
        }
        #expect(throws: TripError.notFound) { try cache.trip("T9", for: Account(id: "c1", role: .customer)) }
    }

    @Test func openPickupsAreThoseOfTheRidesStillSearching() {
        let cache = TripCache(store: InMemoryTripStore(), endedLimit: 10)
        let far = Coordinate(lat: 60.30, lng: 24.9384)
        cache.remember([
            Self.ride("T1"), Self.ride("T2", customer: "c2"), Self.ride("T3", customer: "c3", pickup: far),
            Self.ride("T4", customer: "c4", provider: "p1", status: .driverAssigned),
        ])
        #expect(Set(cache.openPickups()) == [Self.helsinki, far] && cache.openPickups().count == 3)
        cache.remember(Self.ride("T2", customer: "c2", status: .cancelled, version: 2))
        #expect(cache.openPickups().count == 2)
    }
}
