import EnRouteNotifications
/// What token-based APNs needs: the `.p8` key, its key id, the team id and the app's bundle id.
public struct APNsConfiguration: Sendable {
    /// The 10-character key id of the `.p8` signing key.
    public var keyID: String
    /// The 10-character team id.
    public var teamID: String
    /// The `.p8` file's contents (PKCS#8 PEM).
    public var privateKeyPEM: String
    /// The app's bundle id, the base `apns-topic`.
    public var topic: String

    public init(keyID: String, teamID: String, privateKeyPEM: String, topic: String) {
        self.keyID = keyID; self.teamID = teamID; self.privateKeyPEM = privateKeyPEM; self.topic = topic
    }
}
