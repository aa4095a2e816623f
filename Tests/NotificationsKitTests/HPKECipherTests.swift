import Testing
import NotificationsKit

/// The platform's `HPKECipher` (CryptoKit on Apple platforms, OpenSSL on Linux) against RFC 9180 Appendix A.2.1:
/// DHKEM(X25519, HKDF-SHA256), HKDF-SHA256, ChaCha20Poly1305, base mode.
@Suite struct HPKECipherTests {
    static let info = bytes("4f6465206f6e2061204772656369616e2055726e")
    static let skRm = bytes("8057991eef8f1f1af18f4a9491d16a1ce333f695d4db8e38da75975c4478e0fb")
    static let pkRm = bytes("4310ee97d88cc1f088a5576c77ab0cf5c3ac797f3d95139c6c84b5429c59662a")
    static let pkEm = bytes("1afa08d3dec047a643885163f1180476fa7ddb54c6a8029ea33f95796bf2ac4a")
    static let plaintext = bytes("4265617574792069732074727574682c20747275746820626561757479")
    /// The RFC's first encryption (sequence 0): what a single-shot seal produces.
    static let aad0 = bytes("436f756e742d30")
    static let ciphertext0 = bytes(
        "1c5250d8034ec2b784ba2cfd69dbdb8af406cfe3ff938e131f0def8c8b60b4db21993c62ce81883d2dd1b51a28")

    let cipher: any HPKECipher = PlatformHPKECipher()

    @Test func thePublicKeyOfTheRFCRecipientKeyMatches() throws {
        #expect(try cipher.publicKey(for: Self.skRm) == Self.pkRm)
    }

    @Test func itOpensThePublishedSingleShotMessage() throws {
        let sealed = Self.pkEm + Self.ciphertext0
        #expect(try cipher.open(sealed, privateKey: Self.skRm, info: Self.info, aad: Self.aad0) == Self.plaintext)
    }

    @Test func aTamperedPublishedMessageDoesNotOpen() throws {
        var sealed = Self.pkEm + Self.ciphertext0
        sealed[40] ^= 1
        #expect(throws: (any Error).self) {
            try cipher.open(sealed, privateKey: Self.skRm, info: Self.info, aad: Self.aad0)
        }
        #expect(throws: (any Error).self) {
            try cipher.open(Self.pkEm + Self.ciphertext0, privateKey: Self.skRm, info: Self.info, aad: [])
        }
    }

    @Test func aSealedMessageOpensOnlyWithItsKeyAndAssociatedData() throws {
        let privateKey = cipher.makePrivateKey()
        let publicKey = try cipher.publicKey(for: privateKey)
        let a = try cipher.seal(Array("Ana".utf8), to: publicKey, info: Self.info, aad: Array("n1".utf8))
        let b = try cipher.seal(Array("Ana".utf8), to: publicKey, info: Self.info, aad: Array("n1".utf8))
        #expect(a.count == 32 + 3 + 16)
        #expect(a != b, "a fresh ephemeral key each time")
        #expect(try cipher.open(a, privateKey: privateKey, info: Self.info, aad: Array("n1".utf8)) == Array("Ana".utf8))
        #expect(throws: (any Error).self) {
            try cipher.open(a, privateKey: privateKey, info: Self.info, aad: Array("n2".utf8))
        }
        #expect(throws: (any Error).self) {
            try cipher.open(a, privateKey: cipher.makePrivateKey(), info: Self.info, aad: Array("n1".utf8))
        }
    }

    @Test func aMessageShorterThanKeyAndTagIsRefused() {
        #expect(throws: HPKEMessageTooShort(count: 47)) {
            try cipher.open([UInt8](repeating: 1, count: 47), privateKey: Self.skRm, info: Self.info, aad: [])
        }
    }
}

/// Bytes from a hex string.
private func bytes(_ hex: String) -> [UInt8] {
    var out: [UInt8] = []
    var index = hex.startIndex
    while index < hex.endIndex {
        let next = hex.index(index, offsetBy: 2)
        out.append(UInt8(hex[index..<next], radix: 16)!)
        index = next
    }
    return out
}
