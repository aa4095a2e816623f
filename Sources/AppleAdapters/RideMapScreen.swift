#if canImport(SwiftUI) && canImport(MapKit)
public import SwiftUI
import MapKit
public import EnRouteModels
public import RideHailing

/// The rider's map screen: nearby cars or the trip on the map, the animated driver, and a bottom sheet.
public struct RideMapScreen: View {
    private let viewModel: TripViewModel
    private let pickup: Coordinate
    private let dropoff: Coordinate

    /// A screen for a ride from `pickup` to `dropoff`, driven by the app's `viewModel`.
    public init(viewModel: TripViewModel, pickup: Coordinate, dropoff: Coordinate) {
        self.viewModel = viewModel
        self.pickup = pickup
        self.dropoff = dropoff
    }

    /// The map, the marker and the sheet.
    public var body: some View {
        // Redraw every display frame while the marker moves; reading `driverLocation` wakes it on each new fix.
        let paused = viewModel.state.driverLocation == nil || viewModel.markerFrame()?.isAnimating != true
        TimelineView(.animation(minimumInterval: 1.0 / 30, paused: paused)) { _ in
            Map {
                Marker("Pickup", systemImage: "figure.wave", coordinate: pickup.locationCoordinate)
                Marker("Drop-off", systemImage: "flag.checkered", coordinate: dropoff.locationCoordinate)
                if viewModel.state.trip == nil {
                    ForEach(Array(viewModel.state.nearbyDrivers.enumerated()), id: \.offset) { _, car in
                        Annotation("", coordinate: car.locationCoordinate) { Image(systemName: "car.fill") }
                    }
                }
                if let frame = viewModel.markerFrame() {
                    Annotation("Driver", coordinate: frame.coordinate.locationCoordinate) {
                        RideDriverMarker(frame: frame)
                    }
                }
            }
        }
        .sheet(isPresented: .constant(true)) {
            RideTripSheet(viewModel: viewModel, pickup: pickup, dropoff: dropoff)
                .presentationDetents([.height(240), .medium])
                .presentationBackgroundInteraction(.enabled)
                .interactiveDismissDisabled()
        }
        .task {
            await viewModel.restoreActiveTrip()
            await viewModel.loadNearbyDrivers(around: pickup)
            await viewModel.loadEstimates(pickup: pickup, dropoff: dropoff)
        }
        .onDisappear { viewModel.stopLive() }
    }
}
#endif
