// Apple platforms only: the app-delegate hook that starts the notification engine. No logic.
#if canImport(UserNotifications) && canImport(UIKit)
import UIKit
import NotificationsKit

/// Attached with `@UIApplicationDelegateAdaptor`; the engine starts before launch finishes, so a tap that launched the app is not lost.
@MainActor
final class NotificationAppDelegate: NSObject, UIApplicationDelegate {
    /// Set by the composition root before launch completes.
    var engine: NotificationEngine?

    func application(_ application: UIApplication, didFinishLaunchingWithOptions launchOptions: [UIApplication.LaunchOptionsKey: Any]? = nil) -> Bool {
        engine?.start()
        return true
    }

    func application(_ application: UIApplication, didRegisterForRemoteNotificationsWithDeviceToken deviceToken: Data) {
        let bytes = [UInt8](deviceToken)
        Task { await engine?.didRegister(deviceToken: bytes) }
    }
}
#endif
