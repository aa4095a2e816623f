// iOS only: the notification service extension around NotificationServiceLogic. No logic.
#if canImport(UserNotifications) && canImport(UIKit)
import HTTPTransport
public import Foundation
public import NotificationsKit
@preconcurrency public import UserNotifications

/// The notification service extension's principal class: subclass it (no body needed) and name the subclass in the
/// extension's `NSExtensionPrincipalClass`. It opens the sealed text with the key the app keeps in the shared keychain
/// group and attaches the photo; every decision is `NotificationServiceLogic`'s.
///
/// The system calls `serviceExtensionTimeWillExpire` on another thread than `didReceive`; the content handler is
/// called exactly once, by whichever hands the content over first.
open class NotificationServiceExtensionAdapter: UNNotificationServiceExtension {
    /// The request in progress, for `serviceExtensionTimeWillExpire`.
    private let current = Locked<PendingNotification?>(nil)

    /// The keychain group shared with the app: the bundle's `EnRouteKeychainAccessGroup`. Nil when that is missing
    /// or malformed; then no key can be read and every notification keeps its generic text.
    open var keychainAccessGroup: KeychainAccessGroup? {
        try? KeychainAccessGroup(infoDictionary: Bundle.main.infoDictionary ?? [:])
    }

    /// Starts improving the notification: the sealed text opened, the photo attached within the deadline.
    open override func didReceive(
        _ request: UNNotificationRequest,
        withContentHandler contentHandler: @escaping (UNNotificationContent) -> Void
    ) {
        // An empty store has no key: a misconfigured group shows the generic text rather than failing.
        let keys: any KeyStore =
            keychainAccessGroup.map { NotificationKeychainKeyStore(accessGroup: $0) }
            ?? InMemoryKeyStore()
        let logic = NotificationServiceLogic(
            keys: keys, images: URLSessionImageFetcher(),
            attachments: TemporaryAttachmentWriter(), clock: ContinuousClock())
        let delivery = ContentDelivery(original: request.content, handler: contentHandler)
        current.withLock { $0 = PendingNotification(logic: logic, delivery: delivery) }
        let payload = NotificationPayload(userInfo: request.content.userInfo)
        Task {
            // Nil when `serviceExtensionTimeWillExpire` has already handed the content over.
            if let result = await logic.didReceive(payload) { delivery.deliver(result) }
        }
    }

    /// Hands over whatever is ready now; the system shows the original content if nothing is.
    open override func serviceExtensionTimeWillExpire() {
        guard let pending = current.withLock({ $0 }) else { return }
        Task {
            if let result = await pending.logic.timeWillExpire() { pending.delivery.deliver(result) }
        }
    }
}

/// One request's logic and its content handler.
struct PendingNotification: Sendable {
    let logic: NotificationServiceLogic
    let delivery: ContentDelivery
}

/// The content handler and the content it improves, handed over once.
final class ContentDelivery: Sendable {
    // The handler is the system's block, safe to call from any thread; it is taken out under the lock, so only the
    // first `deliver` calls it.
    private let state: Locked<(original: UNNotificationContent, handler: ((UNNotificationContent) -> Void)?)>

    init(original: UNNotificationContent, handler: @escaping (UNNotificationContent) -> Void) {
        state = Locked((original: original, handler: handler))
    }

    /// Calls the handler with `result` over the original content, unless it was called before.
    func deliver(_ result: EnrichedNotification) {
        let taken = state.withLock { box -> (UNNotificationContent, (UNNotificationContent) -> Void)? in
            guard let handler = box.handler else { return nil }
            box.handler = nil
            return (box.original, handler)
        }
        guard let (original, handler) = taken else { return }
        handler(Self.content(result, over: original))
    }

    private static func content(
        _ result: EnrichedNotification, over original: UNNotificationContent
    )
        -> UNNotificationContent
    {
        guard let content = original.mutableCopy() as? UNMutableNotificationContent else { return original }
        content.title = result.title
        content.body = result.body
        if let url = result.attachment {
            // The type hint says what the file is when its name does not.
            let options: [AnyHashable: Any]? = result.attachmentTypeHint.map {
                [UNNotificationAttachmentOptionsTypeHintKey: $0]
            }
            if let attachment = try? UNNotificationAttachment(identifier: "rider", url: url, options: options) {
                content.attachments = [attachment]
            }
        }
        return content
    }
}

/// Downloads the photo with URLSession.
struct URLSessionImageFetcher: ImageFetcher {
    func fetch(_ url: URL) async throws -> Data { try await URLSession.shared.data(from: url).0 }
}

/// Writes the photo to a temporary file, which the system moves into the notification.
struct TemporaryAttachmentWriter: AttachmentWriter {
    func write(_ data: Data, suggestedName: String) throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let url = directory.appendingPathComponent(suggestedName)
        try data.write(to: url)
        return url
    }
}
#endif
