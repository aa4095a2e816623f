#if canImport(SwiftUI) && canImport(MapKit)
import SwiftUI
import EnRouteModels
import RideHailing

/// The bottom sheet: products with their quoted price and time left before a ride, what the server asks after a
/// refused confirmation, the trip and its cancel button during one.
struct RideTripSheet: View {
    let viewModel: TripViewModel
    let pickup: Coordinate
    let dropoff: Coordinate
    @Environment(\.openURL) private var openURL

    var body: some View {
        VStack(alignment: .leading, spacing: 12) {
            ForEach(RideScreen.render(viewModel.state, marker: nil), id: \.self) { Text($0) }
            if viewModel.state.trip?.state.isActive != true {
                ForEach(viewModel.state.estimates, id: \.productID) { estimate in
                    Button("Confirm \(estimate.productID)") {
                        Task { await viewModel.confirm(productID: estimate.productID) }
                    }
                    .disabled(!viewModel.state.canRequest)
                }
                promptActions
            }
            if viewModel.state.canCancel || viewModel.state.isCancelling {
                Button("Cancel ride", role: .destructive) { Task { await viewModel.cancelTrip() } }
                    .buttonStyle(.bordered)
                    .disabled(viewModel.state.isCancelling)
            }
        }
        .padding()
    }

    /// The one action each prompt offers; its message is among the rendered lines above.
    @ViewBuilder private var promptActions: some View {
        switch viewModel.state.prompt {
        case .challenge(let url):
            Button("Open your bank's page") { openURL(url) }
            Button("I've confirmed it") { Task { await viewModel.challengeAnswered() } }
        case .cardDeclined:
            ForEach(viewModel.state.paymentMethods.filter { !$0.isDefault }) { card in
                Button("Pay with \(card.brand.capitalized) ···· \(card.last4)") {
                    Task { await viewModel.payWith(cardID: card.id) }
                }
                .disabled(viewModel.state.isPaying)
            }
        case .outstandingBalance:
            Button("Pay now") { Task { await viewModel.settle() } }
                .disabled(viewModel.state.isPaying)
        case .addCard, .confirmNewPrice, nil:
            EmptyView()
        }
    }
}
#endif
