// Apple platforms only: location authorization through CLLocationManager, for the systems before iOS 18 whose
// location updates neither ask for authorization nor say that it was denied. No logic.
#if canImport(CoreLocation)
import CoreLocation
import RideHailing

/// The app's location authorization, asked for and awaited on the main actor: the manager calls its delegate on
/// the run loop of the thread that made it.
@MainActor
final class LocationAuthorization: NSObject, CLLocationManagerDelegate {
    /// The authorization a feature needs.
    enum Level {
        /// While the app is in use (the rider's pickup).
        case whenInUse
        /// Always (the provider's shift, in the background).
        case always
    }

    private var manager: CLLocationManager?
    private var waiting: [CheckedContinuation<Void, Never>] = []

    /// The status now.
    var status: CLAuthorizationStatus { locationManager().authorizationStatus }

    /// True while the person, or a device policy, refuses this app location.
    var isDenied: Bool { status == .denied || status == .restricted }

    /// Asks for `level` if the person has not answered yet (for `.always`, also after a While Using answer), waits
    /// for the answer, and returns whether location is denied.
    func request(_ level: Level) async -> Bool {
        let manager = locationManager()
        // The system ignores a request the person has already answered; Always may still follow a While Using
        // answer, once. (`.authorizedWhenInUse` does not exist on macOS, so the status is not switched on here.)
        switch level {
        case .whenInUse: manager.requestWhenInUseAuthorization()
        case .always: manager.requestAlwaysAuthorization()
        }
        while status == .notDetermined, !Task.isCancelled { await nextChange() }
        return isDenied
    }

    /// Returns once location becomes denied, or when the calling task is cancelled.
    func untilDenied() async {
        while !isDenied, !Task.isCancelled { await nextChange() }
    }

    nonisolated func locationManagerDidChangeAuthorization(_ manager: CLLocationManager) {
        // Delivered on the main run loop: the manager was made on the main actor.
        MainActor.assumeIsolated { resumeWaiting() }
    }

    private func locationManager() -> CLLocationManager {
        if let manager { return manager }
        let made = CLLocationManager()
        made.delegate = self
        manager = made
        return made
    }

    private func nextChange() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { waiting.append($0) }
        } onCancel: {
            Task { @MainActor in self.resumeWaiting() }
        }
    }

    private func resumeWaiting() {
        let resumed = waiting
        waiting.removeAll()
        for continuation in resumed { continuation.resume() }
    }
}

extension LocationAuthorization {
    /// Runs `body` to its end, but fails with `LocationError.denied` as soon as location is denied: before iOS 18
    /// a denied app's updates simply stop, so without this the wait would never end.
    nonisolated func failingOnDenial<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws -> T {
        try await withThrowingTaskGroup(of: T.self) { group in
            group.addTask { try await body() }
            group.addTask {
                await self.untilDenied()
                try Task.checkCancellation()
                throw LocationError.denied
            }
            defer { group.cancelAll() }
            guard let first = try await group.next() else { throw CancellationError() }
            return first
        }
    }
}
#endif
