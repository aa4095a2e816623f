#if canImport(SwiftUI) && canImport(CoreLocation) && canImport(ProviderKit)
import CoreLocation
import EnRouteModels
public import ProviderKit

/// Feeds the point buffer from `CLLocationUpdate.liveUpdates(.automotiveNavigation)` for the whole shift, with a
/// background activity session so the system keeps delivering while the app is in the background (seed 004).
///
/// Needs `UIBackgroundModes` = `location` and the Always authorization; the blue indicator shows while it runs.
@available(iOS 18.0, macOS 15.0, *)
public final class ProviderBackgroundLocation {
    private let buffer: PointBuffer
    private var task: Task<Void, Never>?
    private var session: CLBackgroundActivitySession?

    /// Writes every reading through `buffer`, whose filter decides what is kept.
    public init(buffer: PointBuffer) { self.buffer = buffer }

    /// Starts reading positions (going online).
    @MainActor
    public func start() {
        guard task == nil else { return }
        session = CLBackgroundActivitySession()
        let buffer = self.buffer
        task = Task.detached {
            do {
                for try await update in CLLocationUpdate.liveUpdates(.automotiveNavigation) {
                    guard let location = update.location else { continue }
                    let fix = LocationFix(lat: location.coordinate.latitude, lng: location.coordinate.longitude,
                                          heading: max(0, location.course), speed: max(0, location.speed),
                                          accuracy: location.horizontalAccuracy, recordedAt: location.timestamp)
                    _ = try? buffer.record(fix)
                }
            } catch {
                // The stream ends on a denied authorization; the online screen shows the system's state.
            }
        }
    }

    /// Stops reading positions (going offline).
    @MainActor
    public func stop() {
        task?.cancel()
        task = nil
        session?.invalidate()
        session = nil
    }
}
#endif
