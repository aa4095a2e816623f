#if canImport(SwiftUI)
public import SwiftUI
public import OrderTracking

/// `AppLifecycle` over SwiftUI's scene phase: the app's root forwards `.onChange(of: scenePhase)`. No logic.
@MainActor
public final class OrderTrackingAppLifecycle: AppLifecycle {
    /// The phase the tracking engines see now.
    public private(set) var phase: AppPhase = .foreground
    private var handlers: [@MainActor (AppPhase) -> Void] = []

    /// A lifecycle that starts in the foreground, as an app does at launch.
    public init() {}

    /// Calls `handler` after every change of `phase`.
    public func observe(_ handler: @escaping @MainActor (AppPhase) -> Void) { handlers.append(handler) }

    /// Call from the root scene's `.onChange(of: scenePhase)`; `.inactive` (a sheet, the app switcher) is no change.
    public func scenePhaseChanged(_ scenePhase: ScenePhase) {
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
