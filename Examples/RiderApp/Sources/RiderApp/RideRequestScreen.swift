import AppleAdapters
import EnRouteModels
import RideHailing
import SwiftUI

/// A ride from where the rider is: the pickup from the location service, then the kit's map screen; once a trip
/// exists, its tracking screen, and after it its receipt.
struct RideRequestScreen: View {
    let dependencies: RiderDependencies
    /// The pickup, once found: this screen's own input, not a model's state.
    @State private var pickup: Coordinate?
    @State private var failure: String?

    var body: some View {
        Group {
            if let pickup {
                RideMapScreen(
                    viewModel: dependencies.trips, pickup: pickup,
                    dropoff: dependencies.configuration.dropoff)
            } else if let failure {
                ContentUnavailableView("No pickup", systemImage: "location.slash", description: Text(failure))
            } else {
                ProgressView("Finding you…")
            }
        }
        .navigationTitle("Ride")
        .toolbar {
            ToolbarItem(placement: .primaryAction) {
                if let trip = dependencies.trips.state.trip {
                    if trip.state.isActive {
                        NavigationLink("Track") {
                            RideTrackingView(ride: Ride(trip: trip), service: dependencies.rides).id(trip.id)
                        }
                    } else if trip.state == .completed {
                        NavigationLink("Receipt") {
                            ReceiptScreen(tripID: trip.id, api: dependencies.tripAPI).id(trip.id)
                        }
                    }
                }
            }
        }
        .task {
            guard pickup == nil else { return }
            do {
                pickup = try await dependencies.location.currentLocation(accuracy: 100)
            } catch LocationError.denied {
                failure = "Allow EnRoute to use your location in Settings to be picked up where you are."
            } catch {
                failure = "Your position could not be found. Try again outside or in a moment."
            }
        }
    }
}

/// The receipt for one trip. It makes the receipt's model from the trip, so it keeps it in `@State` (the first one
/// made stays); give it `.id(tripID)` so another trip gets its own.
struct ReceiptScreen: View {
    @State private var model: ReceiptViewModel

    init(tripID: String, api: any TripReceiptAPI) {
        _model = State(initialValue: ReceiptViewModel(tripID: tripID, api: api, clock: ContinuousClock()))
    }

    var body: some View {
        RideReceiptView(viewModel: model)
            .navigationTitle("Receipt")
    }
}
