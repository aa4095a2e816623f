#if canImport(SwiftUI) && canImport(MapKit)
public import SwiftUI
import MapKit
import EnRouteModels
public import OrderTracking

/// The order tracking screen: the map, the steps and the ETA; reports appearing, disappearing and map gestures to
/// the model. No logic.
public struct OrderTrackingView: View {
    private let viewModel: OrderTrackingViewModel
    /// The pin glides linearly over one poll interval: no guessing ahead.
    private let pinAnimation: Duration
    @State private var camera: MapCameraPosition = .automatic
    @State private var shownRider: Coordinate?

    /// A screen over the app's `viewModel`; the rider's pin moves to each new fix over `pinAnimation`.
    public init(viewModel: OrderTrackingViewModel, pinAnimation: Duration = .seconds(5)) {
        self.viewModel = viewModel
        self.pinAnimation = pinAnimation
    }

    /// The map, then the banner, title, ETA (with the stops before this order) and steps.
    public var body: some View {
        let state = viewModel.viewState
        VStack(alignment: .leading, spacing: 12) {
            Map(position: $camera) {
                if let rider = shownRider, let pin = Self.fix(state.riderPin) {
                    Annotation(pin.label ?? "Rider", coordinate: rider.locationCoordinate) {
                        Image(systemName: "bicycle.circle.fill").font(.title).opacity(pin.label == nil ? 1 : 0.5)
                    }
                }
                if let home = state.destination {
                    Annotation("Home", coordinate: home.locationCoordinate) {
                        Image(systemName: "house.circle.fill").font(.title)
                    }
                }
            }
            .frame(minHeight: 280)
            .onChange(of: camera.positionedByUser) { _, byUser in if byUser { viewModel.userMovedMap() } }
            .onChange(of: Self.fix(state.riderPin)?.coordinate, initial: true) { _, next in
                withAnimation(.linear(duration: Double(pinAnimation.components.seconds))) { shownRider = next }
            }

            if let banner = state.banner {
                Text(banner).font(.callout.bold()).padding(8).frame(maxWidth: .infinity, alignment: .leading)
                    .background(.orange.opacity(0.2), in: .rect(cornerRadius: 8))
            }
            Text(state.title).font(.title2.bold())
            Text(state.eta).font(.headline)
            if let stops = state.stopsBefore {
                Text(stops).font(.subheadline).foregroundStyle(.secondary)
            }
            ForEach(state.steps, id: \.step) { row in
                Label(
                    row.title,
                    systemImage: row.progress == .done
                        ? "checkmark.circle.fill"
                        : row.progress == .current ? "circle.inset.filled" : "circle"
                )
                .fontWeight(row.progress == .current ? .semibold : .regular)
            }
        }
        .padding()
        .task { await viewModel.onAppear() }
        .onDisappear { viewModel.onDisappear() }
    }

    private static func fix(_ pin: RiderPin) -> (coordinate: Coordinate, label: String?)? {
        switch pin {
        case .live(let fix): (fix.coordinate, nil)
        case .stale(let fix, let label): (fix.coordinate, label)
        case .hidden: nil
        }
    }
}
#endif
