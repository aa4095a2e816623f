#if canImport(SwiftUI) && canImport(ProviderKit)
public import SwiftUI
import EnRouteModels
public import ProviderKit

/// The offer card: pickup and drop-off (and the route over both orders when stacked), the countdown, accept and
/// decline. All logic is in `OfferViewModel`.
public struct ProviderOfferCard: View {
    private let model: OfferViewModel

    /// A card over the app's `model` for one offer.
    public init(model: OfferViewModel) { self.model = model }

    /// The offer, its countdown and the two answers.
    public var body: some View {
        let state = model.state
        VStack(alignment: .leading, spacing: 12) {
            HStack {
                Text("New trip").font(.headline)
                Spacer()
                Text("\(state.secondsLeft) s")
                    .font(.title2.monospacedDigit())
                    .foregroundStyle(state.secondsLeft <= 5 ? .red : .primary)
            }
            Label(Self.text(state.offer.pickup), systemImage: "mappin.circle")
            Label(Self.text(state.offer.dropoff), systemImage: "flag.checkered")
            if let route = state.routeText {
                Text(route).font(.callout.bold())
                ForEach(Array(state.routeLines.enumerated()), id: \.offset) { index, line in
                    Text("\(index + 1). \(line)").font(.callout)
                }
            }
            if let message = state.message {
                Text(message).font(.callout).foregroundStyle(.red)
            }
            HStack {
                Button("Decline", role: .cancel) { Task { await model.decline() } }
                    .buttonStyle(.bordered)
                Spacer()
                Button(state.phase == .accepting ? "Accepting…" : "Accept") { Task { await model.accept() } }
                    .buttonStyle(.borderedProminent)
                    .disabled(!state.canAnswer)
            }
        }
        .padding()
        .task { await model.runCountdown() }
    }

    private static func text(_ point: Coordinate) -> String {
        String(format: "%.5f, %.5f", point.lat, point.lng)
    }
}
#endif
