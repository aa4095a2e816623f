#if canImport(SwiftUI)
import SwiftUI
import OrderTracking

/// `AppLifecycle` over SwiftUI's scenePhase: the root view forwards `.onChange(of: scenePhase)`. No logic.
@MainActor
final class OrderTrackingAppLifecycle: AppLifecycle {
    private(set) var phase: AppPhase = .foreground
    private var handlers: [@MainActor (AppPhase) -> Void] = []

    func observe(_ handler: @escaping @MainActor (AppPhase) -> Void) { handlers.append(handler) }

    /// Call from the root scene; `.inactive` (a sheet, the app switcher) is not a change.
    func scenePhaseChanged(_ scenePhase: ScenePhase) {
        let next: AppPhase
        switch scenePhase {
        case .active: next = .foreground
        case .background: next = .background
        default: return
        }
        guard next != phase else { return }
        phase = next
        for handler in handlers { handler(next) }
    }
}
#endif
