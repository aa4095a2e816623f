// Apple platforms only: CryptoKit's HPKE, the same suite the server seals with. No logic of its own.
#if canImport(CryptoKit)
import CryptoKit
import Foundation

/// `HPKECipher` over CryptoKit's `HPKE` (iOS 17, macOS 14).
public struct CryptoKitHPKECipher: HPKECipher {
    private static let suite = HPKE.Ciphersuite(kem: .Curve25519_HKDF_SHA256, kdf: .HKDF_SHA256, aead: .chaChaPoly)

    /// The cipher (stateless).
    public init() {}

    public func makePrivateKey() -> [UInt8] { [UInt8](Curve25519.KeyAgreement.PrivateKey().rawRepresentation) }

    public func publicKey(for privateKey: [UInt8]) throws -> [UInt8] {
        [UInt8](try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: privateKey).publicKey.rawRepresentation)
    }

    public func seal(_ plaintext: [UInt8], to publicKey: [UInt8], info: [UInt8], aad: [UInt8]) throws -> [UInt8] {
        let recipient = try Curve25519.KeyAgreement.PublicKey(rawRepresentation: publicKey)
        var sender = try HPKE.Sender(recipientKey: recipient, ciphersuite: Self.suite, info: Data(info))
        let ciphertext = try sender.seal(Data(plaintext), authenticating: Data(aad))
        return [UInt8](sender.encapsulatedKey) + [UInt8](ciphertext)
    }

    public func open(_ sealed: [UInt8], privateKey: [UInt8], info: [UInt8], aad: [UInt8]) throws -> [UInt8] {
        guard sealed.count >= Self.encapsulatedKeyLength + Self.tagLength else {
            throw HPKEMessageTooShort(count: sealed.count)
        }
        let key = try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: privateKey)
        var recipient = try HPKE.Recipient(
            privateKey: key, ciphersuite: Self.suite, info: Data(info),
            encapsulatedKey: Data(sealed.prefix(Self.encapsulatedKeyLength)))
        return [UInt8](
            try recipient.open(Data(sealed.dropFirst(Self.encapsulatedKeyLength)), authenticating: Data(aad)))
    }
}

/// The `HPKECipher` this platform has.
public typealias PlatformHPKECipher = CryptoKitHPKECipher
#endif
