/// `PUT /v1/devices/{token}` body (seed 001).
public struct DeviceRegistrationBody: Codable, Sendable, Equatable {
    /// "ios".
    public let platform: String
    /// "sandbox" or "production" ("development" reads as sandbox).
    public let environment: String
    public let appVersion: String
    /// The device's X25519 public key, base64 (32 bytes), for encrypted push content.
    public let publicKey: String?

    public init(platform: String, environment: String, appVersion: String, publicKey: String?) {
        self.platform = platform; self.environment = environment; self.appVersion = appVersion; self.publicKey = publicKey
    }
}
