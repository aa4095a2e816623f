/// The part of UNUserNotificationCenter and UIApplication the engine uses; the Apple adapter implements it.
@MainActor
public protocol NotificationCenterClient: AnyObject {
    /// Makes the engine the center's delegate (before launch finishes, or a launching tap is lost).
    func setDelegate(_ engine: NotificationEngine)
    func setCategories(_ categories: Set<NotificationCategory>)
    func authorizationStatus() async -> PushPermission
    /// Throws when the system could not ask.
    func requestAuthorization(provisional: Bool) async throws -> Bool
    func registerForRemoteNotifications()
    func unregisterForRemoteNotifications()
}
