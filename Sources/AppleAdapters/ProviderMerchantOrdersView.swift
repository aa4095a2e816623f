#if canImport(SwiftUI) && canImport(ProviderKit)
public import SwiftUI
import EnRouteModels
public import ProviderKit

/// The merchant's tablet: open orders, accept with a preparation time, mark ready. All logic is in
/// `MerchantOrdersViewModel`.
public struct ProviderMerchantOrdersView: View {
    private let model: MerchantOrdersViewModel
    /// The stepper's preparation time: the screen's own input, not the model's state.
    @State private var minutes = 15

    /// A screen over the app's `model`.
    public init(model: MerchantOrdersViewModel) { self.model = model }

    /// The open orders, each with its one action.
    public var body: some View {
        let state = model.state
        List {
            if let message = state.message {
                Text(message).foregroundStyle(.red)
            }
            ForEach(state.orders, id: \.id) { order in
                HStack {
                    VStack(alignment: .leading) {
                        Text("Order \(order.id)").font(.headline)
                        Text((order.items ?? []).map { "\($0.quantity) × \($0.sku)" }.joined(separator: ", "))
                            .font(.subheadline)
                        if let readyAt = order.readyAt { Text("Ready by \(readyAt, style: .time)").font(.caption) }
                    }
                    Spacer()
                    switch MerchantOrdersViewState.action(for: order) {
                    case .accept?:
                        Stepper("\(minutes) min", value: $minutes, in: 1...240)
                            .frame(maxWidth: 180)
                        Button("Accept") { Task { await model.accept(order.id, preparationMinutes: minutes) } }
                            .buttonStyle(.borderedProminent)
                            .disabled(state.busy.contains(order.id))
                    case .markReady?:
                        Button("Ready") { Task { await model.markReady(order.id) } }
                            .buttonStyle(.borderedProminent)
                            .disabled(state.busy.contains(order.id))
                    case nil:
                        Text(order.merchantStep ?? order.status).foregroundStyle(.secondary)
                    }
                }
            }
        }
        .refreshable { await model.load() }
        .task { await model.load() }
    }
}
#endif
