// iOS only: UNUserNotificationCenter behind NotificationCenterClient. No logic.
#if canImport(UserNotifications) && canImport(UIKit)
public import Foundation
import UIKit
public import NotificationsKit
@preconcurrency public import UserNotifications

/// `NotificationCenterClient` over `UNUserNotificationCenter` and `UIApplication`, and the center's delegate: taps
/// and foreground pushes go to the engine as `NotificationPayload`s, read before they leave the system's callback.
@MainActor
public final class NotificationCenterAdapter: NSObject, NotificationCenterClient, UNUserNotificationCenterDelegate {
    private let center = UNUserNotificationCenter.current()
    private weak var engine: NotificationEngine?

    /// An adapter over the app's notification center; the engine makes it the center's delegate at launch.
    public override init() {
        super.init()
    }

    /// Makes this adapter the center's delegate, forwarding to `engine`.
    public func setDelegate(_ engine: NotificationEngine) {
        self.engine = engine
        center.delegate = self
    }

    /// Registers the categories and their one action each.
    public func setCategories(_ categories: Set<NotificationCategory>) {
        center.setNotificationCategories(
            Set(
                categories.map { category in
                    let action = UNNotificationAction(
                        identifier: category.actionIdentifier, title: category.actionTitle,
                        options: [.foreground])
                    return UNNotificationCategory(
                        identifier: category.identifier, actions: [action], intentIdentifiers: [],
                        options: [])
                }))
    }

    /// The system's permission, as the kit names it.
    public func authorizationStatus() async -> PushPermission {
        switch await center.notificationSettings().authorizationStatus {
        case .notDetermined: .notAsked
        case .provisional: .quiet
        case .authorized, .ephemeral: .allowed
        case .denied: .denied
        @unknown default: .denied
        }
    }

    /// Asks the system; provisional shows no prompt.
    public func requestAuthorization(provisional: Bool) async throws -> Bool {
        var options: UNAuthorizationOptions = [.alert, .badge, .sound]
        if provisional { options.insert(.provisional) }
        return try await center.requestAuthorization(options: options)
    }

    /// Asks for a device token (every launch).
    public func registerForRemoteNotifications() { UIApplication.shared.registerForRemoteNotifications() }

    /// Stops remote notifications (sign-out).
    public func unregisterForRemoteNotifications() { UIApplication.shared.unregisterForRemoteNotifications() }

    /// A tap: returns once the inbox has it, so the system does not consider the response handled before.
    public nonisolated func userNotificationCenter(
        _ center: UNUserNotificationCenter,
        didReceive response: UNNotificationResponse
    ) async {
        // `userInfo` is not Sendable: read it here, and hand the Sendable payload to the main actor.
        let payload = NotificationPayload(userInfo: response.notification.request.content.userInfo)
        await didReceive(payload, actionIdentifier: response.actionIdentifier)
    }

    /// A push while the app is open: banner, list and sound, or nothing when the screen on display refreshes.
    public nonisolated func userNotificationCenter(
        _ center: UNUserNotificationCenter,
        willPresent notification: UNNotification
    )
        async -> UNNotificationPresentationOptions
    {
        let payload = NotificationPayload(userInfo: notification.request.content.userInfo)
        return await presentation(for: payload) == .banner ? [.banner, .list, .sound] : []
    }

    private func didReceive(_ payload: NotificationPayload, actionIdentifier: String) async {
        await engine?.didReceive(payload, actionIdentifier: actionIdentifier)
    }

    private func presentation(for payload: NotificationPayload) -> ForegroundPresentation {
        engine?.willPresent(payload) ?? .banner
    }
}
#endif
