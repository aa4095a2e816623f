/// A notification type and its one button; both open the app (`.foreground`).
public struct NotificationCategory: Hashable, Sendable {
    public let identifier: String
    public let actionIdentifier: String
    public let actionTitle: String

    public static let trackOrderAction = "TRACK_ORDER"
    public static let seeOfferAction = "SEE_OFFER"

    /// Order updates, with "Track order".
    public static let orderUpdate = NotificationCategory(
        identifier: "ORDER_UPDATE", actionIdentifier: trackOrderAction, actionTitle: "Track order")
    /// Offers, with "See offer".
    public static let offer = NotificationCategory(
        identifier: "OFFER", actionIdentifier: seeOfferAction, actionTitle: "See offer")
    /// Chat messages: the server's `CHAT_MESSAGE` pushes, whose sealed `secret` is the message itself.
    public static let chatMessageIdentifier = "CHAT_MESSAGE"
    /// Every category the app declares at launch.
    public static let all: Set<NotificationCategory> = [.orderUpdate, .offer]
}
