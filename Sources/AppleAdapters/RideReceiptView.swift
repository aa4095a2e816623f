#if canImport(SwiftUI)
public import SwiftUI
import EnRouteModels
public import RideHailing

/// After the ride: the receipt's lines, total and card once the payment settles, a tip and a rating.
public struct RideReceiptView: View {
    private let viewModel: ReceiptViewModel
    /// The tips offered, in the trip's minor units.
    private let tips: [Int]

    /// A receipt screen driven by the app's `viewModel`, offering `tips` (minor units of the receipt's currency).
    public init(viewModel: ReceiptViewModel, tips: [Int] = [100, 200, 500]) {
        self.viewModel = viewModel
        self.tips = tips
    }

    /// The receipt, then the tip and rating buttons.
    public var body: some View {
        VStack(alignment: .leading, spacing: 8) {
            if let receipt = viewModel.state.receipt {
                ForEach(RideScreen.receipt(receipt), id: \.self) { Text($0).monospaced() }
            } else if viewModel.state.isWaitingForPayment {
                ProgressView("Waiting for the payment to go through…")
            }
            if viewModel.state.canTip {
                HStack {
                    ForEach(tips, id: \.self) { amount in
                        Button(viewModel.state.tipLabel(amountMinor: amount)) {
                            Task { await viewModel.tip(amountMinor: amount) }
                        }
                        .buttonStyle(.bordered)
                    }
                }
            }
            if viewModel.state.canRate {
                HStack {
                    ForEach(1...5, id: \.self) { stars in
                        Button {
                            Task { await viewModel.rate(stars: stars) }
                        } label: {
                            Image(systemName: "star.fill")
                        }
                        .accessibilityLabel("\(stars) stars")
                    }
                }
            }
            if let message = viewModel.state.errorMessage { Text(message).foregroundStyle(.red) }
        }
        .padding()
        .task { await viewModel.load() }
    }
}
#endif
