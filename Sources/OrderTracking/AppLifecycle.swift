/// Whether the app is on screen.
public enum AppPhase: Equatable, Sendable {
    case foreground, background
}

/// The app's foreground/background signal (scenePhase on iOS); the polling engine's first trigger.
@MainActor
public protocol AppLifecycle: AnyObject {
    /// The phase right now.
    var phase: AppPhase { get }
    /// Calls `handler` after every change of `phase`.
    func observe(_ handler: @escaping @MainActor (AppPhase) -> Void)
}
