import SwiftUI
import AppleAdapters

/// The rider's app: Home (the active order's banner, a ride), Orders (tracking), Account (notifications).
@main
struct RiderApp: App {
    @UIApplicationDelegateAdaptor(RiderAppDelegate.self) private var delegate
    @Environment(\.scenePhase) private var scenePhase

    var body: some Scene {
        WindowGroup {
            RiderRootView(dependencies: delegate.dependencies)
                .onChange(of: scenePhase) { _, phase in delegate.dependencies.lifecycle.scenePhaseChanged(phase) }
        }
    }
}
