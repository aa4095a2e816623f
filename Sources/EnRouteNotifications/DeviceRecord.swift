public import Foundation

/// One registered device token and the account it belongs to now.
public struct DeviceRecord: Sendable, Equatable, Codable {
    /// The APNs device token as lowercase hex.
    public let token: String
    public var accountId: String
    /// "ios" today.
    public var platform: String
    public var environment: APNsEnvironment
    public var appVersion: String
    /// The device's X25519 public key for encrypted push content; nil when it sent none.
    public var publicKey: [UInt8]?
    /// The last time the token was registered, to judge a 410's timestamp.
    public var registeredAt: Date

    public init(
        token: String, accountId: String, platform: String, environment: APNsEnvironment, appVersion: String,
        publicKey: [UInt8]?, registeredAt: Date
    ) {
        self.token = token; self.accountId = accountId; self.platform = platform; self.environment = environment
        self.appVersion = appVersion; self.publicKey = publicKey; self.registeredAt = registeredAt
    }
}
