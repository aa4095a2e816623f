import Foundation
import Testing
import EnRouteModels
import EnRouteDomain

/// The rules the composition root connects to commits: who wakes after a change, and how a final price is measured.
@Suite struct CommitRulesTests {
    static let t0 = Date(timeIntervalSince1970: 1_800_000_000)
    static let pickup = Coordinate(lat: 60.1699, lng: 24.9384)

    static func ride(_ status: TripState, provider: String? = "p1", paid: Bool = true) -> TripRecord {
        var trip = TripRecord(
            id: "T1", kind: .ride, status: .ride(status), customerId: "c1", pickup: pickup,
            dropoff: Coordinate(lat: 60.1841, lng: 24.9497), createdAt: t0)
        trip.providerId = provider
        if paid {
            trip.payment = TripPayment(gateway: "sandbox", methodId: "pm", card: nil, currency: "EUR", heldMinor: 1000)
        }
        return trip
    }

    @Test func thePaymentWorkerWakesWhenAPaidTripEndsOrATipIsRecorded() {
        #expect(PaymentWorker.hasWork(from: Self.ride(.onTrip), to: Self.ride(.completed)))
        #expect(PaymentWorker.hasWork(from: Self.ride(.driverAssigned), to: Self.ride(.cancelled)))
        #expect(!PaymentWorker.hasWork(from: Self.ride(.onTrip, paid: false), to: Self.ride(.completed, paid: false)))
        #expect(!PaymentWorker.hasWork(from: Self.ride(.searching), to: Self.ride(.driverAssigned)))
        // A later change of an ended trip (a rating) settles nothing again.
        #expect(!PaymentWorker.hasWork(from: Self.ride(.completed), to: Self.ride(.completed)))
        var tipped = Self.ride(.completed)
        tipped.tip = TripTip(amount: Money(amountMinor: 200, currency: "EUR"), givenAt: Self.t0)
        #expect(PaymentWorker.hasWork(from: Self.ride(.completed), to: tipped))
    }

    @Test func relaySessionsAreReviewedWhenTheTripEndsOrChangesProvider() {
        #expect(TripCalls.mayCloseSessions(from: Self.ride(.onTrip), to: Self.ride(.completed)))
        #expect(
            TripCalls.mayCloseSessions(from: Self.ride(.driverAssigned), to: Self.ride(.driverAssigned, provider: "p2"))
        )
        #expect(TripCalls.mayCloseSessions(from: Self.ride(.driverAssigned), to: Self.ride(.searching, provider: nil)))
        #expect(!TripCalls.mayCloseSessions(from: Self.ride(.searching, provider: nil), to: Self.ride(.driverAssigned)))
        #expect(!TripCalls.mayCloseSessions(from: Self.ride(.driverAssigned), to: Self.ride(.driverArrived)))
        #expect(!TripCalls.mayCloseSessions(from: nil, to: Self.ride(.searching, provider: nil)))
    }

    @Test func aPathIsMatchedOnlyWhenTheTripJustEndedCompletedOrDelivered() {
        #expect(CompletedPathMatching.isCompletion(from: Self.ride(.onTrip), to: Self.ride(.completed)))
        #expect(!CompletedPathMatching.isCompletion(from: Self.ride(.onTrip), to: Self.ride(.cancelled)))
        #expect(!CompletedPathMatching.isCompletion(from: Self.ride(.completed), to: Self.ride(.completed)))
        #expect(!CompletedPathMatching.isCompletion(from: nil, to: Self.ride(.completed)))
    }

    static func point(metresNorthOfPickup metres: Double, at seconds: TimeInterval) -> PathPoint {
        PathPoint(
            tripId: "T1", providerId: "p1", lat: pickup.lat + metres / 111_195, lng: pickup.lng, heading: 0, speed: 8,
            accuracy: 5, recordedAt: t0.addingTimeInterval(seconds), receivedAt: t0.addingTimeInterval(seconds))
    }

    @Test func aProviderIsOnTheWayOnceAHundredMetresCloserToThePickup() async throws {
        let paths = InMemoryPathStore()
        let measurement = PathMeasurement(paths: paths, hasRoads: false)
        let trip = Self.ride(.cancelled)
        try await paths.append([
            Self.point(metresNorthOfPickup: 2_000, at: -60), Self.point(metresNorthOfPickup: 1_000, at: 10),
            Self.point(metresNorthOfPickup: 905, at: 40),
        ])
        // Before the assignment the provider came 1 km closer; after it, 95 m.
        #expect(!(await measurement.providerProgressed(trip, since: Self.t0)))
        try await paths.append([Self.point(metresNorthOfPickup: 895, at: 50)])
        #expect(await measurement.providerProgressed(trip, since: Self.t0))
        #expect(!(await measurement.providerProgressed(trip, since: Self.t0.addingTimeInterval(45))))
    }

    @Test func theStoredPathIsMeasuredAndTheMatchWaitedForWhenThereAreRoads() async throws {
        let paths = InMemoryPathStore()
        var trip = Self.ride(.completed)
        try await paths.append([
            Self.point(metresNorthOfPickup: 0, at: 0), Self.point(metresNorthOfPickup: 1_000, at: 120),
        ])
        let measured = await PathMeasurement(paths: paths, hasRoads: false).measured(trip, final: false)
        guard case .value(let metres, let seconds) = measured else {
            Issue.record("expected a value, got \(measured)")
            return
        }
        #expect(abs(metres - 1_000) < 1)
        #expect(seconds == 120)
        let roads = PathMeasurement(paths: paths, hasRoads: true)
        #expect(await roads.measured(trip, final: false) == .pending)
        guard case .value = await roads.measured(trip, final: true) else {
            Issue.record("the last try measures the stored path")
            return
        }
        trip.matchedDistanceMeters = 1_234
        trip.matchedDurationSeconds = 150
        #expect(await roads.measured(trip, final: false) == .value(distanceMeters: 1_234, durationSeconds: 150))
        #expect(await roads.measured(Self.ride(.completed, provider: nil), final: true) != .pending)
    }
}
