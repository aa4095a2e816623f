// The notification flow's request bodies, shared by the server's NotificationsAPI and the client's NotificationsKit.

/// `PUT /v1/devices/{token}` body.
public struct DeviceRegistrationBody: Codable, Sendable, Equatable {
    /// "ios".
    public let platform: String
    /// "sandbox" or "production" ("development" reads as sandbox).
    public let environment: String
    public let appVersion: String
    /// The device's X25519 public key, base64 (32 bytes), for encrypted push content.
    public let publicKey: String?

    public init(platform: String, environment: String, appVersion: String, publicKey: String?) {
        self.platform = platform; self.environment = environment; self.appVersion = appVersion;
        self.publicKey = publicKey
    }
}

/// `POST /v1/notifications/{id}/opened` body: which action opened it.
public struct NotificationOpenedBody: Codable, Sendable, Equatable {
    /// "open" (the body), "trackOrder" or "seeOffer" (the buttons).
    public let action: String
    public init(action: String) { self.action = action }
}
