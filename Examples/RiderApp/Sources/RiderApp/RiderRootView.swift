import AppleAdapters
import NotificationsKit
import SwiftUI

/// The root: the kit's tab view, each tab's first screen, and the screen for each route a tab pushes.
struct RiderRootView: View {
    let dependencies: RiderDependencies

    var body: some View {
        NotificationRootView(viewModel: dependencies.root, links: dependencies.configuration.links) { tab in
            switch tab {
            case .home: HomeTab(dependencies: dependencies)
            case .orders: OrdersTab(dependencies: dependencies)
            case .account: AccountTab(dependencies: dependencies)
            }
        } destination: { route in
            switch route {
            case .order(let order): OrderScreen(orderID: order.rawValue, dependencies: dependencies).id(order)
            case .offer: ContentUnavailableView("Offers are for couriers", systemImage: "bicycle")
            case .signIn: ContentUnavailableView("Sign in to see this", systemImage: "person.crop.circle")
            case .home: EmptyView()
            }
        }
        .task { await dependencies.run() }
    }
}
