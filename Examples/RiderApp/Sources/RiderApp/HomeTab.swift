import AppleAdapters
import NotificationsKit
import OrderTracking
import SwiftUI

/// Home: the active order's banner, which opens its tracking screen, and a ride.
struct HomeTab: View {
    let dependencies: RiderDependencies

    var body: some View {
        List {
            OrderTrackingHomeBannerView(viewModel: dependencies.banner) { order in
                dependencies.root.open(.order(.init(order.rawValue)))
            }
            NavigationLink("Request a ride") { RideRequestScreen(dependencies: dependencies) }
        }
        .navigationTitle("EnRoute")
    }
}
