// Apple platforms only: the UNNotificationServiceExtension wrapper around NotificationServiceLogic. No logic.
#if canImport(UserNotifications) && canImport(UIKit)
import Foundation
import UserNotifications
import NotificationsKit

/// The extension target's principal class subclasses this and supplies its keychain access group.
open class NotificationServiceExtensionAdapter: UNNotificationServiceExtension {
    private var logic: NotificationServiceLogic?
    private var handler: ((UNNotificationContent) -> Void)?
    private var original: UNNotificationContent?

    /// The keychain access group shared with the app.
    open var accessGroup: String { "" }

    open override func didReceive(_ request: UNNotificationRequest, withContentHandler contentHandler: @escaping (UNNotificationContent) -> Void) {
        let logic = NotificationServiceLogic(keys: NotificationKeychainKeyStore(accessGroup: accessGroup), images: URLSessionImageFetcher(),
                                             attachments: TemporaryAttachmentWriter(), clock: ContinuousClock())
        self.logic = logic
        handler = contentHandler
        original = request.content
        let payload = NotificationPayload(userInfo: request.content.userInfo)
        Task {
            if let result = await logic.didReceive(payload) { self.deliver(result) }
        }
    }

    open override func serviceExtensionTimeWillExpire() {
        guard let logic else { return }
        Task { if let result = await logic.timeWillExpire() { self.deliver(result) } }
    }

    private func deliver(_ result: EnrichedNotification) {
        guard let original, let content = original.mutableCopy() as? UNMutableNotificationContent else { return }
        content.title = result.title
        content.body = result.body
        if let url = result.attachment, let attachment = try? UNNotificationAttachment(identifier: "rider", url: url) {
            content.attachments = [attachment]
        }
        handler?(content)
        handler = nil
    }
}

/// Downloads the photo with URLSession.
struct URLSessionImageFetcher: ImageFetcher {
    func fetch(_ url: URL) async throws -> Data { try await URLSession.shared.data(from: url).0 }
}

/// Writes the photo to a temporary file the system moves into the notification.
struct TemporaryAttachmentWriter: AttachmentWriter {
    func write(_ data: Data, suggestedName: String) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString + "-" + suggestedName)
        try data.write(to: url)
        return url
    }
}
#endif
