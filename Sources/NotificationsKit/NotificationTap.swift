/// A tapped notification, built by the engine from the payload; the domain never sees `UNNotification`.
public struct NotificationTap: Equatable, Sendable {
    /// From the payload. Drops repeats, keys analytics.
    public let id: NotificationID
    /// Who the server sent it to.
    public let accountID: AccountID?
    /// nil when this app version can't read the route.
    public let route: Route?
    /// .open (the body) or .trackOrder (the button).
    public let action: TapAction

    public init(id: NotificationID, accountID: AccountID?, route: Route?, action: TapAction) {
        self.id = id; self.accountID = accountID; self.route = route; self.action = action
    }
}
