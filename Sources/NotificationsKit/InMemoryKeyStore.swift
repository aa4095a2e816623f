import HTTPTransport

/// A `KeyStore` in memory (tests, Linux tools); iOS uses the keychain adapter.
public final class InMemoryKeyStore: KeyStore {
    private let cipher: any HPKECipher
    private let pair = Locked<(privateKey: [UInt8], publicKey: [UInt8])?>(nil)

    /// A store with no pair yet; `cipher` makes the keys.
    public init(cipher: any HPKECipher = PlatformHPKECipher()) { self.cipher = cipher }

    public func makeKeyPair() async throws -> [UInt8] {
        let privateKey = cipher.makePrivateKey()
        let publicKey = try cipher.publicKey(for: privateKey)
        pair.withLock { $0 = (privateKey, publicKey) }
        return publicKey
    }

    public func publicKey() async -> [UInt8]? { pair.withLock { $0?.publicKey } }
    public func privateKey() async -> [UInt8]? { pair.withLock { $0?.privateKey } }
    public func deleteKeyPair() async { pair.withLock { $0 = nil } }
}
