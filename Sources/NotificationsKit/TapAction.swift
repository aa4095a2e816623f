/// What the user pressed: the notification itself, or one of its buttons.
public enum TapAction: String, Hashable, Sendable, Codable {
    /// The body ("open" on the wire).
    case open
    /// "Track order" on an order update.
    case trackOrder
    /// "See offer" on an offer.
    case seeOffer

    /// The action for a `UNNotificationResponse.actionIdentifier`; anything unknown is the body.
    public init(actionIdentifier: String) {
        switch actionIdentifier {
        case NotificationCategory.trackOrderAction: self = .trackOrder
        case NotificationCategory.seeOfferAction: self = .seeOffer
        default: self = .open
        }
    }
}
