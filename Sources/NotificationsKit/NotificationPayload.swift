public import Foundation

/// The custom keys of an EnRoute push, read from `userInfo`.
public struct NotificationPayload: Equatable, Sendable {
    public var notificationID: NotificationID?
    public var accountID: AccountID?
    /// The raw `route` string; `route` is its parse.
    public var routePath: String?
    public var orderVersion: Int?
    public var secret: String?
    public var imageURL: URL?
    public var title: String
    public var body: String
    public var category: String?

    /// Reads a push's `userInfo`; missing keys stay nil.
    public init(userInfo: [AnyHashable: Any]) {
        let aps = userInfo["aps"] as? [String: Any]
        let alert = aps?["alert"] as? [String: Any]
        title = alert?["title"] as? String ?? ""
        body = alert?["body"] as? String ?? (aps?["alert"] as? String ?? "")
        category = aps?["category"] as? String
        notificationID = (userInfo["notificationId"] as? String).map { NotificationID(rawValue: $0) }
        accountID = (userInfo["accountId"] as? String).map { AccountID(rawValue: $0) }
        routePath = userInfo["route"] as? String
        orderVersion = (userInfo["orderVersion"] as? NSNumber)?.intValue
        secret = userInfo["secret"] as? String
        imageURL = (userInfo["imageUrl"] as? String).flatMap(URL.init(string:))
    }

    /// Reads a payload's JSON bytes (tests, tools).
    public init?(json: [UInt8]) {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(json))) as? [String: Any] else { return nil }
        self.init(userInfo: object)
    }

    /// The route, or nil when this app version can't read it.
    public var route: Route? { routePath.flatMap(Route.init(path:)) }

    /// The tap for this payload and action; nil without a notification id.
    public func tap(action: TapAction) -> NotificationTap? {
        guard let notificationID else { return nil }
        return NotificationTap(id: notificationID, accountID: accountID, route: route, action: action)
    }
}
