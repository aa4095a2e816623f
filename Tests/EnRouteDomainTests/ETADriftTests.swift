import Foundation
import Synchronization
import Testing
import EnRouteModels
import EnRouteDomain
import TestSupport

/// Fix-driven ETA drift is written down only when it is large, and small drift costs no transaction.
@Suite struct ETADriftTests {
    /// A store that counts the transactions it is asked for.
    final class CountingStore: ForwardingTripStore, @unchecked Sendable {
        let transactions = Atomic<Int>(0)
        var count: Int { transactions.load(ordering: .relaxed) }

        override func transaction<T: Sendable>(
            _ body: @escaping @Sendable (any TripTransaction) async throws -> T
        ) async throws -> T {
            transactions.wrappingAdd(1, ordering: .relaxed)
            return try await base.transaction(body)
        }
    }

    /// Straight-line estimates, but an ETA the test sets, whatever the time or position.
    final class FixedETA: TripEstimator {
        let eta = Mutex<Date>(Date(timeIntervalSince1970: 1_800_000_000))
        func refreshETA(_ trip: TripRecord, now: Date) -> TripRecord {
            var trip = trip
            let latest = eta.withLock { $0 }
            trip.etaEarliest = latest.addingTimeInterval(-120)
            trip.etaLatest = latest
            return trip
        }
        func estimates(pickup: Coordinate, dropoff: Coordinate) -> [Estimate] {
            StraightLineEstimator().estimates(pickup: pickup, dropoff: dropoff)
        }
        var products: [String] { StraightLineEstimator().products }
    }

    @Test func driftIsWrittenWhenLargeAtMostOnceAMinuteAndDecidedInMemoryOtherwise() async throws {
        let clock = ManualClock()
        let store = CountingStore()
        let estimator = FixedETA()
        let e0 = estimator.eta.withLock { $0 }
        let service = TripService(
            store: store, directory: TestDirectory.helsinki, estimator: estimator,
            ids: SequentialIDGenerator(prefix: "T"), now: { clock.date })
        let pickup = Coordinate(lat: 60.1699, lng: 24.9384)
        let ride = try await service.requestRide(
            TripRequest(pickup: pickup, dropoff: Coordinate(lat: 60.1841, lng: 24.9497), productID: "economy"),
            by: Account(id: "c1", role: .customer))
        _ = try await service.move(ride.id, .assignProvider("p1"), by: Account(id: "p1", role: .provider))
        var metres = 0.0
        func drive(to eta: Date) {
            estimator.eta.withLock { $0 = eta }
            metres += 10
            service.recordFixes(
                [
                    LocationFix(
                        lat: pickup.lat + metres / 111_195, lng: pickup.lng, heading: 0, speed: 8, accuracy: 5,
                        recordedAt: clock.date.addingTimeInterval(metres / 1_000))
                ], provider: "p1")
        }
        let base = store.count

        // Within a minute of the assignment: even ten minutes of drift wait, without a transaction.
        drive(to: e0.addingTimeInterval(600))
        #expect(try await service.persistETADrift(of: ride.id) == false)
        #expect(store.count == base)

        // A minute on, 30 s of drift is too small to write: decided in memory.
        await clock.advance(by: .seconds(61))
        drive(to: e0.addingTimeInterval(30))
        #expect(try await service.persistETADrift(of: ride.id) == false)
        #expect(store.count == base)

        // Five minutes of drift: one write, and the store has the new ETA.
        drive(to: e0.addingTimeInterval(300))
        #expect(try await service.persistETADrift(of: ride.id) == true)
        #expect(store.count == base + 1)
        #expect(try store.trip(id: ride.id)?.etaLatest == e0.addingTimeInterval(300))
        #expect(try await service.persistETADrift(of: ride.id) == false)

        // More drift 30 s later waits for the minute to pass, then is written.
        await clock.advance(by: .seconds(30))
        drive(to: e0.addingTimeInterval(900))
        #expect(try await service.persistETADrift(of: ride.id) == false)
        #expect(store.count == base + 1)
        await clock.advance(by: .seconds(31))
        #expect(try await service.persistETADrift(of: ride.id) == true)
        #expect(store.count == base + 2)
        #expect(try store.trip(id: ride.id)?.etaLatest == e0.addingTimeInterval(900))
    }
}
