#if canImport(SwiftUI)
import SwiftUI
import OrderTracking

/// The Home screen's active-order banner; taps open the tracking screen. No logic.
struct OrderTrackingHomeBannerView: View {
    @State var viewModel: HomeBannerViewModel
    let open: (OrderID) -> Void

    var body: some View {
        if let banner = viewModel.banner {
            Button { open(banner.order) } label: {
                VStack(alignment: .leading) {
                    Text(banner.title).font(.headline)
                    Text(banner.detail).font(.subheadline).foregroundStyle(.secondary)
                }
                .frame(maxWidth: .infinity, alignment: .leading)
                .padding()
                .background(.thinMaterial, in: .rect(cornerRadius: 12))
            }
            .buttonStyle(.plain)
        }
    }
}
#endif
