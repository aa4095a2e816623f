// iOS only: the provider's positions for the whole shift, in the background too. No logic.
// CLBackgroundActivitySession exists from iOS 17 and not at all on macOS.
#if os(iOS) && canImport(CoreLocation) && canImport(ProviderKit)
import CoreLocation
import ClientKit
public import EnRouteModels
public import ProviderKit
import RideHailing

/// Feeds the point buffer from `CLLocationUpdate.liveUpdates(.automotiveNavigation)` for the whole shift, holding a
/// `CLBackgroundActivitySession` so the system keeps delivering while the app is in the background.
///
/// Needs `UIBackgroundModes` = `location`, `NSLocationWhenInUseUsageDescription` and
/// `NSLocationAlwaysAndWhenInUseUsageDescription`. It asks for Always (iOS 18: a `CLServiceSession`; iOS 17: the
/// location manager); the blue indicator shows while it runs. Each update is judged by `LocationReadingPolicy`.
public final class ProviderBackgroundLocation: Sendable {
    private let buffer: PointBuffer
    private let accuracy: Double
    private let unavailableLimit: Int

    /// Writes every position within `accuracy` metres through `buffer`, whose filter decides what is kept; gives up
    /// after `unavailableLimit` updates in a row without a position.
    public init(buffer: PointBuffer, accuracy: Double = 50, unavailableLimit: Int = 5) {
        self.buffer = buffer
        self.accuracy = accuracy
        self.unavailableLimit = unavailableLimit
    }

    /// Reads positions until the calling task is cancelled (going offline), writing each through the buffer and
    /// handing it to `onFix` (the trip screen's guidance). Throws `LocationError.denied` when location is denied and
    /// `LocationError.unavailable` when updates keep coming without a position; run it again to resume.
    public func run(onFix: @escaping @Sendable (LocationFix) async -> Void = { _ in }) async throws {
        let background = CLBackgroundActivitySession()
        defer { background.invalidate() }
        let policy = LocationReadingPolicy(accuracy: accuracy, unavailableLimit: unavailableLimit)
        if #available(iOS 18.0, *) {
            let goal = CLServiceSession(authorization: .always)
            defer { goal.invalidate() }
            var reader = policy
            for try await update in CLLocationUpdate.liveUpdates(.automotiveNavigation) {
                guard let reading = LocationReading(update) else { continue }
                try await record(update, reading, &reader, onFix)
            }
            return
        }
        let authorization = await MainActor.run { LocationAuthorization() }
        if await authorization.request(.always) { throw LocationError.denied }
        try await authorization.failingOnDenial { [self] in
            var reader = policy
            for try await update in CLLocationUpdate.liveUpdates(.automotiveNavigation) {
                let reading = LocationReading(update, denied: await authorization.isDenied)
                try await record(update, reading, &reader, onFix)
            }
        }
    }

    private func record(
        _ update: CLLocationUpdate, _ reading: LocationReading, _ reader: inout LocationReadingPolicy,
        _ onFix: @Sendable (LocationFix) async -> Void
    ) async throws {
        guard try reader.coordinate(for: reading) != nil, let location = update.location else { return }
        let fix = LocationFix(
            lat: location.coordinate.latitude, lng: location.coordinate.longitude,
            heading: max(0, location.course), speed: max(0, location.speed),
            accuracy: location.horizontalAccuracy, recordedAt: location.timestamp)
        // A store that cannot write loses this one position; the next is written as usual.
        _ = try? buffer.record(fix)
        await onFix(fix)
    }
}
#endif
