#if canImport(SwiftUI) && canImport(MapKit)
public import SwiftUI
import MapKit
public import RideHailing

/// The ride tracking screen: headline, route, cancel button and the arriving banner.
///
/// The screen makes its own model from `ride`, so it keeps it in `@State`: SwiftUI keeps the first model for as
/// long as the view's identity lasts. Give the view `.id(ride.id)` so that another ride gets a new screen and model.
public struct RideTrackingView: View {
    @State private var viewModel: RideTrackingViewModel

    /// A screen for `ride`, tracked through `service` (`LiveRideService` in the app, `PreviewRideService` in
    /// previews).
    public init(ride: Ride, service: any RideTracking, logger: any RideLogger = SystemRideLogger()) {
        _viewModel = State(initialValue: RideTrackingViewModel(ride: ride, service: service, logger: logger))
    }

    /// The map, the headline, the cancel button and the banner.
    public var body: some View {
        VStack(spacing: 0) {
            Map {
                Marker("Pickup", coordinate: viewModel.ride.pickup.locationCoordinate)
                if !viewModel.route.isEmpty {
                    MapPolyline(coordinates: viewModel.route.map(\.locationCoordinate)).stroke(.blue, lineWidth: 4)
                }
                if let driver = viewModel.driverPosition {
                    Annotation("Driver", coordinate: driver.locationCoordinate) { Image(systemName: "car.fill") }
                }
            }
            VStack(spacing: 4) {
                Text(headline).font(.title3.bold())
                if viewModel.status == .enRoute, let meters = viewModel.metersAway {
                    Text(
                        Measurement(value: Double(meters), unit: UnitLength.meters),
                        format: .measurement(width: .abbreviated)
                    )
                    .foregroundStyle(.secondary)
                }
                if viewModel.canCancel || viewModel.status == .cancelling {
                    Button("Cancel ride", role: .destructive) {
                        Task { await viewModel.cancelRide() }
                    }
                    .buttonStyle(.bordered)
                    .disabled(viewModel.status == .cancelling)
                    .padding(.top, 8)
                }
                if let error = viewModel.cancelError {
                    Text(error).font(.footnote).foregroundStyle(.red)
                }
            }
            .padding()
        }
        .overlay(alignment: .top) {
            if viewModel.showsArrivingBanner {
                Label("\(viewModel.ride.driverName) is almost here. Head to the pickup.", systemImage: "car.fill")
                    .font(.headline)
                    .padding()
                    .frame(maxWidth: .infinity)
                    .background(.green.gradient, in: .rect(cornerRadius: 16))
                    .foregroundStyle(.white)
                    .padding()
                    .transition(.move(edge: .top).combined(with: .opacity))
            }
        }
        .animation(.default, value: viewModel.showsArrivingBanner)
        .task { await viewModel.loadRoute() }
        .task { await viewModel.track() }  // cancelled when the screen goes away
    }

    private var headline: String {
        switch viewModel.status {
        case .findingDriver:
            "Finding your driver…"
        case .enRoute:
            if let eta = viewModel.eta {
                "Arriving in \(eta.formatted(.units(allowed: [.minutes, .seconds], width: .abbreviated)))"
            } else {
                "Your driver is on the way"
            }
        case .arrived:
            "\(viewModel.ride.driverName) is here"
        case .cancelling:
            "Cancelling…"
        case .cancelled:
            "Ride cancelled"
        }
    }
}
#endif
