/// Data-internal: the engine's promise for the server's record of this phone's token.
public protocol DeviceRegistration: Sendable {
    /// Sends only if token or account differ from the last success.
    /// Throws on failure; the engine retries at the next launch.
    func register(token: DeviceToken, for account: AccountID?) async throws
    /// Must finish before the session drops the credentials.
    func unregister() async throws
}
