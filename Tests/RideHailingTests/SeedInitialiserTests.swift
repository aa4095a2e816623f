import Foundation
import Testing
import EnRouteModels
import TestSupport
import RideHailing
import RideHailingPreviews

/// Seeds 002 and 003 build their values with these exact calls; this file compiling is the proof that they still do.
/// Where the project added a parameter (a logger, a clock), it has a default.
@MainActor
@Suite struct SeedInitialiserTests {
    /// Seed 002's models, state machine and marker, as its text writes (or implies) them.
    @Test func seed002sInitialisersCompileAsWritten() {
        let pickup = Coordinate(lat: 60.1699, lng: 24.9384)
        let location = DriverLocation(
            coordinate: pickup, heading: 90, timestamp: Date(timeIntervalSince1970: 0), seq: 1)
        let driver = Driver(
            id: "D-1", name: "Mehmet", carModel: "Prius", plate: "ABC-123", rating: 4.9,
            photoURL: URL(string: "https://cdn.example.com/d1.jpg")!)
        let fare = Money(amountMinor: 990, currency: "USD")
        let trip = Trip(
            id: "T-1", state: .driverAssigned, pickup: pickup, dropoff: pickup, driver: driver, etaSeconds: 60,
            fare: fare, version: 2)
        let request = TripRequest(pickup: pickup, dropoff: pickup, productID: "economy")
        var machine = TripStateMachine()
        machine.apply(trip)
        var marker = DriverMarkerAnimator()
        marker.handle(location)
        #expect(machine.trip == trip)
        #expect(marker.target == location)
        #expect(request.productID == "economy")
        #expect(TripEvent.driverMoved(location) != TripEvent.tripUpdated(trip))
        #expect(LocationError.unavailable == .unavailable)
    }

    /// Seed 003's ride, update, service and view model, exactly as its text and its tests call them.
    @Test func seed003sInitialisersCompileAsWritten() async throws {
        let ride = Ride(
            id: "R-1", driverName: "Mehmet", car: "Prius",
            pickup: Coordinate(latitude: 52.51, longitude: 13.37))
        let update = DriverUpdate(
            sequence: 1, position: Coordinate(latitude: 52.52, longitude: 13.40), metersAway: 1000)
        // the seed's scripted `RideService()`, named as the fake it is
        let service: any RideTracking = PreviewRideService()
        let viewModel = RideTrackingViewModel(ride: ride, service: service)
        #expect(viewModel.ride == ride)
        #expect(viewModel.status == .findingDriver)
        #expect(ride.pickup == Coordinate(lat: 52.51, lng: 13.37))
        #expect(update.reportedETA == nil)
        #expect(try await service.eta(for: update) == .seconds(125))
    }
}
