#if canImport(SwiftUI)
public import SwiftUI
public import OrderTracking

/// The Home screen's active-order banner; a tap opens the tracking screen. No logic.
public struct OrderTrackingHomeBannerView: View {
    private let viewModel: HomeBannerViewModel
    private let open: (OrderID) -> Void

    /// A banner over the app's `viewModel`; `open` shows the tapped order's tracking screen.
    public init(viewModel: HomeBannerViewModel, open: @escaping (OrderID) -> Void) {
        self.viewModel = viewModel
        self.open = open
    }

    /// The banner, or nothing while no order is active.
    public var body: some View {
        if let banner = viewModel.banner {
            Button {
                open(banner.order)
            } label: {
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
