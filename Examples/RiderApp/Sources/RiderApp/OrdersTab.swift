import NotificationsKit
import OrderTracking
import SwiftUI

/// Orders: the active orders; each opens its tracking screen through the tab's navigation path.
struct OrdersTab: View {
    let dependencies: RiderDependencies

    var body: some View {
        List(dependencies.store.activeOrders, id: \.orderID) { order in
            NavigationLink(value: Route.order(.init(order.orderID.rawValue))) {
                VStack(alignment: .leading) {
                    Text("Order \(order.orderID.rawValue)").font(.headline)
                    if let step = order.status.step { Text(step.title).foregroundStyle(.secondary) }
                }
            }
        }
        .overlay {
            if dependencies.store.activeOrders.isEmpty {
                ContentUnavailableView("No active orders", systemImage: "bag")
            }
        }
        .navigationTitle("Orders")
    }
}

/// One order's tracking screen. It makes the screen's model from the order, so it keeps it in `@State` (the first
/// one made stays); give it `.id(order)` so another order gets its own.
struct OrderScreen: View {
    @State private var model: OrderTrackingViewModel

    init(orderID: String, dependencies: RiderDependencies) {
        _model = State(initialValue: dependencies.trackingModel(orderID: orderID))
    }

    var body: some View {
        ScrollView { OrderTrackingView(viewModel: model) }
            .navigationTitle("Your order")
    }
}
