#if canImport(SwiftUI) && canImport(MapKit)
import SwiftUI
import EnRouteModels
import RideHailing

/// The bottom sheet: products before a ride, the trip and its cancel button during one.
struct RideTripSheet: View {
    let viewModel: TripViewModel
    let pickup: Coordinate
    let dropoff: Coordinate

    var body: some View {
        VStack(alignment: .leading, spacing: 12) {
            ForEach(RideScreen.render(viewModel.state, marker: nil), id: \.self) { Text($0) }
            if viewModel.state.trip?.state.isActive != true {
                ForEach(viewModel.state.estimates, id: \.productID) { estimate in
                    Button("Request \(estimate.productID)") {
                        Task {
                            await viewModel.requestRide(TripRequest(pickup: pickup, dropoff: dropoff, productID: estimate.productID))
                        }
                    }
                    .disabled(!viewModel.state.canRequest)
                }
            }
            if viewModel.state.canCancel || viewModel.state.isCancelling {
                Button("Cancel ride", role: .destructive) { Task { await viewModel.cancelTrip() } }
                    .buttonStyle(.bordered)
                    .disabled(viewModel.state.isCancelling)
            }
        }
        .padding()
    }
}
#endif
