/// The device's X25519 key pair for encrypted push content: made at sign-in, deleted at sign-out.
/// On iOS it lives in a keychain access group shared with the service extension.
public protocol KeyStore: Sendable {
    /// Makes a new key pair, replacing any, and returns its public half.
    func makeKeyPair() async throws -> [UInt8]
    /// The current public key, if a pair exists.
    func publicKey() async -> [UInt8]?
    /// The current private key, if a pair exists (the service extension's read).
    func privateKey() async -> [UInt8]?
    /// Deletes the pair.
    func deleteKeyPair() async
}
