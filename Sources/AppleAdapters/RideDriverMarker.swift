#if canImport(SwiftUI) && canImport(MapKit)
import SwiftUI
import RideHailing

/// Draws the driver's car at one `MarkerFrame` from `DriverMarkerAnimator`; no logic of its own.
struct RideDriverMarker: View {
    let frame: MarkerFrame

    var body: some View {
        Image(systemName: "car.top.radiowaves.rear.fill")
            .font(.title2)
            .foregroundStyle(.white)
            .padding(6)
            .background(.black, in: .circle)
            .rotationEffect(.degrees(frame.heading))
            .accessibilityLabel("Your driver")
    }
}
#endif
