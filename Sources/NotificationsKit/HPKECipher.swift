/// HPKE (RFC 9180) base mode in the one suite push secrets use: DHKEM(X25519, HKDF-SHA256), HKDF-SHA256,
/// ChaCha20-Poly1305. NotificationsKit owns this promise so it needs no particular crypto library:
/// `CryptoKitHPKECipher` keeps it on Apple platforms, `OpenSSLHPKECipher` on Linux; `PlatformHPKECipher`
/// names the one this platform has.
///
/// Keys are raw 32-byte X25519 keys; a sealed message is the encapsulated key followed by the ciphertext.
public protocol HPKECipher: Sendable {
    /// A fresh X25519 private key from the system's CSPRNG.
    func makePrivateKey() -> [UInt8]
    /// The X25519 public key for `privateKey`.
    func publicKey(for privateKey: [UInt8]) throws -> [UInt8]
    /// Single-shot seal to `publicKey`: the encapsulated key (32 bytes) ‖ ciphertext ‖ tag (16 bytes).
    func seal(_ plaintext: [UInt8], to publicKey: [UInt8], info: [UInt8], aad: [UInt8]) throws -> [UInt8]
    /// Single-shot open of `seal`'s output; throws when it is malformed or does not verify.
    func open(_ sealed: [UInt8], privateKey: [UInt8], info: [UInt8], aad: [UInt8]) throws -> [UInt8]
}

/// A sealed message too short to hold an encapsulated key and a tag.
public struct HPKEMessageTooShort: Error, Equatable, Sendable {
    /// The byte count that arrived.
    public let count: Int
    /// The error for a message of `count` bytes.
    public init(count: Int) { self.count = count }
}

extension HPKECipher {
    /// The encapsulated key's length (an X25519 public key).
    static var encapsulatedKeyLength: Int { 32 }
    /// ChaCha20-Poly1305's tag length.
    static var tagLength: Int { 16 }
}
