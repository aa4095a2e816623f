// Linux only (Package.swift links EnRouteCrypto for Linux alone): the OpenSSL HPKE that the server seals with.
#if os(Linux)
import EnRouteCrypto

/// `HPKECipher` over EnRouteCrypto's RFC 9180 implementation (libcrypto's X25519 and ChaCha20-Poly1305).
public struct OpenSSLHPKECipher: HPKECipher {
    /// The cipher (stateless).
    public init() {}

    public func makePrivateKey() -> [UInt8] { X25519.generatePrivateKey() }

    public func publicKey(for privateKey: [UInt8]) throws -> [UInt8] { try X25519.publicKey(for: privateKey) }

    public func seal(_ plaintext: [UInt8], to publicKey: [UInt8], info: [UInt8], aad: [UInt8]) throws -> [UInt8] {
        try HPKE.seal(plaintext, to: publicKey, info: info, aad: aad)
    }

    public func open(_ sealed: [UInt8], privateKey: [UInt8], info: [UInt8], aad: [UInt8]) throws -> [UInt8] {
        guard sealed.count >= Self.encapsulatedKeyLength + Self.tagLength else {
            throw HPKEMessageTooShort(count: sealed.count)
        }
        return try HPKE.open(sealed, privateKey: privateKey, info: info, aad: aad)
    }
}

/// The `HPKECipher` this platform has.
public typealias PlatformHPKECipher = OpenSSLHPKECipher
#endif
