/// `POST /v1/notifications/{id}/opened` body: which action opened it.
public struct NotificationOpenedBody: Codable, Sendable, Equatable {
    /// "open" (the body), "trackOrder" or "seeOffer" (the buttons).
    public let action: String
    public init(action: String) { self.action = action }
}
