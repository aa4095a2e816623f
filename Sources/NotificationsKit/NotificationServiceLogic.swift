import Foundation

/// The Notification Service Extension as a pure unit: decrypt `secret` into the body, fetch the photo
/// within a deadline, deliver what it has when time runs out, keep the generic text if decryption fails.
///
/// The content is handed over once: by `didReceive` or by `timeWillExpire`, whichever comes first.
public actor NotificationServiceLogic {
    private let keys: any KeyStore
    private let images: any ImageFetcher
    private let attachments: any AttachmentWriter
    private let clock: any Clock<Duration>
    private let cipher: any HPKECipher
    private let photoDeadline: Duration
    private var best: EnrichedNotification?
    private var handedOver = false
    /// True when the last `secret` could not be opened (a metric: extension fallbacks).
    public private(set) var fellBack = false

    /// `photoDeadline` keeps well inside the system's ~30 seconds; `cipher` opens the `secret`.
    public init(
        keys: any KeyStore, images: any ImageFetcher, attachments: any AttachmentWriter, clock: any Clock<Duration>,
        photoDeadline: Duration = .seconds(20), cipher: any HPKECipher = PlatformHPKECipher()
    ) {
        self.keys = keys
        self.images = images
        self.attachments = attachments
        self.clock = clock
        self.cipher = cipher
        self.photoDeadline = photoDeadline
    }

    /// didReceive: the improved content, or nil when `timeWillExpire` already delivered.
    public func didReceive(_ payload: NotificationPayload) async -> EnrichedNotification? {
        var content = EnrichedNotification(title: payload.title, body: payload.body)
        best = content
        if let secret = payload.secret, let id = payload.notificationID {
            if let key = await keys.privateKey(),
                let opened = NotificationSecret.open(secret, notificationID: id, privateKey: key, cipher: cipher)
            {
                // A chat push's secret is the message; an order update's is the rider's name, set into its copy.
                content.body =
                    payload.category == NotificationCategory.chatMessageIdentifier
                    ? opened : PersonalisedCopy.body(generic: payload.body, riderName: opened) ?? payload.body
                best = content
            } else {
                fellBack = true
            }
        }
        if let url = payload.imageURL, !handedOver, let (file, kind) = await photo(url) {
            content.attachment = file
            content.attachmentTypeHint = kind.uniformTypeIdentifier
            best = content
        }
        return handOver()
    }

    /// serviceExtensionTimeWillExpire: whatever is ready now (never nil before `didReceive` started).
    public func timeWillExpire() -> EnrichedNotification? { handOver() }

    private func handOver() -> EnrichedNotification? {
        guard !handedOver, let best else { return nil }
        handedOver = true
        return best
    }

    /// The photo as a file named with its kind's extension, or nil when it fails, misses the deadline or is not an
    /// image the system attaches.
    private func photo(_ url: URL) async -> (URL, AttachmentImageKind)? {
        let images = self.images, clock = self.clock, deadline = photoDeadline
        let data: Data? = await withTaskGroup(of: Data?.self) { group in
            group.addTask { try? await images.fetch(url) }
            group.addTask {
                try? await clock.sleep(for: deadline); return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
        guard let data, let kind = AttachmentImageKind(sniffing: data),
            let file = try? attachments.write(data, suggestedName: kind.fileName(for: url))
        else { return nil }
        return (file, kind)
    }
}
