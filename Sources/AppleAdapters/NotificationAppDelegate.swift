// iOS only: the app-delegate hook that starts the notification engine at launch. No logic.
#if canImport(UserNotifications) && canImport(UIKit)
public import Foundation
public import UIKit
public import NotificationsKit

/// The app delegate's notification part, attached with `@UIApplicationDelegateAdaptor`: the engine starts before
/// launch finishes, so a tap that launched the app is not lost, and the device token reaches it.
///
/// Subclass it and return the app's engine from `makeEngine()`; an override of either application method calls
/// `super`.
@MainActor
open class NotificationAppDelegate: NSObject, UIApplicationDelegate {
    /// The engine `makeEngine()` returned when launch began.
    public private(set) var engine: NotificationEngine?

    /// A delegate with no engine until launch.
    public override init() {
        super.init()
    }

    /// The app's engine, from its composition root; called once, when launch begins. Nil leaves notifications off.
    open func makeEngine() -> NotificationEngine? { nil }

    /// Starts the engine: the center's delegate, the categories, registration for remote notifications.
    open func application(
        _ application: UIApplication,
        didFinishLaunchingWithOptions launchOptions: [UIApplication.LaunchOptionsKey: Any]? = nil
    )
        -> Bool
    {
        engine = makeEngine()
        engine?.start()
        return true
    }

    /// Hands the device token to the engine, which registers it with the server.
    open func application(
        _ application: UIApplication,
        didRegisterForRemoteNotificationsWithDeviceToken deviceToken: Data
    ) {
        guard let engine else { return }
        let bytes = [UInt8](deviceToken)
        Task { await engine.didRegister(deviceToken: bytes) }
    }
}
#endif
