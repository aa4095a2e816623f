// Apple platforms only: UNUserNotificationCenter behind NotificationCenterClient. No logic.
#if canImport(UserNotifications) && canImport(UIKit)
import UIKit
import UserNotifications
import NotificationsKit

/// `NotificationCenterClient` over `UNUserNotificationCenter` and `UIApplication`.
@MainActor
final class NotificationCenterAdapter: NSObject, NotificationCenterClient, UNUserNotificationCenterDelegate {
    private let center = UNUserNotificationCenter.current()
    private weak var engine: NotificationEngine?

    func setDelegate(_ engine: NotificationEngine) {
        self.engine = engine
        center.delegate = self
    }

    func setCategories(_ categories: Set<NotificationCategory>) {
        center.setNotificationCategories(Set(categories.map { category in
            UNNotificationCategory(identifier: category.identifier,
                                   actions: [UNNotificationAction(identifier: category.actionIdentifier, title: category.actionTitle, options: [.foreground])],
                                   intentIdentifiers: [], options: [])
        }))
    }

    func authorizationStatus() async -> PushPermission {
        switch await center.notificationSettings().authorizationStatus {
        case .notDetermined: .notAsked
        case .provisional: .quiet
        case .authorized, .ephemeral: .allowed
        case .denied: .denied
        @unknown default: .denied
        }
    }

    func requestAuthorization(provisional: Bool) async throws -> Bool {
        var options: UNAuthorizationOptions = [.alert, .badge, .sound]
        if provisional { options.insert(.provisional) }
        return try await center.requestAuthorization(options: options)
    }

    func registerForRemoteNotifications() { UIApplication.shared.registerForRemoteNotifications() }
    func unregisterForRemoteNotifications() { UIApplication.shared.unregisterForRemoteNotifications() }

    nonisolated func userNotificationCenter(_ center: UNUserNotificationCenter, didReceive response: UNNotificationResponse) async {
        let userInfo = response.notification.request.content.userInfo
        let action = response.actionIdentifier
        await MainActor.run { [userInfo] in
            Task { await self.engine?.didReceive(userInfo: userInfo, actionIdentifier: action) }
        }
    }

    nonisolated func userNotificationCenter(_ center: UNUserNotificationCenter, willPresent notification: UNNotification)
        async -> UNNotificationPresentationOptions {
        let userInfo = notification.request.content.userInfo
        let presentation = await MainActor.run { [userInfo] in self.engine?.willPresent(userInfo: userInfo) ?? .banner }
        return presentation == .banner ? [.banner, .list, .sound] : []
    }
}
#endif
