import Testing
import EnRouteCrypto

/// RFC 9180 Appendix A.2.1: DHKEM(X25519, HKDF-SHA256), HKDF-SHA256, ChaCha20Poly1305, base mode.
@Suite struct HPKETests {
    static let info = hex("4f6465206f6e2061204772656369616e2055726e")
    static let ikmE = hex("909a9b35d3dc4713a5e72a4da274b55d3d3821a37e5d099e74a647db583a904b")
    static let skEm = hex("f4ec9b33b792c372c1d2c2063507b684ef925b8c75a42dbcbf57d63ccd381600")
    static let pkEm = hex("1afa08d3dec047a643885163f1180476fa7ddb54c6a8029ea33f95796bf2ac4a")
    static let ikmR = hex("1ac01f181fdf9f352797655161c58b75c656a6cc2716dcb66372da835542e1df")
    static let skRm = hex("8057991eef8f1f1af18f4a9491d16a1ce333f695d4db8e38da75975c4478e0fb")
    static let pkRm = hex("4310ee97d88cc1f088a5576c77ab0cf5c3ac797f3d95139c6c84b5429c59662a")
    static let key = hex("ad2744de8e17f4ebba575b3f5f5a8fa1f69c2a07f6e7500bc60ca6e3e3ec1c91")
    static let baseNonce = hex("5c4d98150661b848853b547f")
    static let exporterSecret = hex("a3b010d4994890e2c6968a36f64470d3c824c8f5029942feb11e7a74b2921922")
    static let plaintext = hex("4265617574792069732074727574682c20747275746820626561757479")
    /// (sequence number, aad, ciphertext) from the RFC's encryptions table.
    static let encryptions: [(Int, [UInt8], [UInt8])] = [
        (
            0, hex("436f756e742d30"),
            hex("1c5250d8034ec2b784ba2cfd69dbdb8af406cfe3ff938e131f0def8c8b60b4db21993c62ce81883d2dd1b51a28")
        ),
        (
            1, hex("436f756e742d31"),
            hex("6b53c051e4199c518de79594e1c4ab18b96f081549d45ce015be002090bb119e85285337cc95ba5f59992dc98c")
        ),
        (
            2, hex("436f756e742d32"),
            hex("71146bd6795ccc9c49ce25dda112a48f202ad220559502cef1f34271e0cb4b02b4f10ecac6f48c32f878fae86b")
        ),
        (
            4, hex("436f756e742d34"),
            hex("63357a2aa291f5a4e5f27db6baa2af8cf77427c7c1a909e0b37214dd47db122bb153495ff0b02e9e54a50dbe16")
        ),
        (
            255, hex("436f756e742d323535"),
            hex("18ab939d63ddec9f6ac2b60d61d36a7375d2070c9b683861110757062c52b8880a5f6b3936da9cd6c23ef2a95c")
        ),
    ]

    @Test func derivedKeyPairsMatchTheRFC() throws {
        let recipient = try HPKE.deriveKeyPair(ikm: Self.ikmR)
        #expect(recipient.privateKey == Self.skRm)
        #expect(recipient.publicKey == Self.pkRm)
        let ephemeral = try HPKE.deriveKeyPair(ikm: Self.ikmE)
        #expect(ephemeral.privateKey == Self.skEm)
        #expect(ephemeral.publicKey == Self.pkEm)
    }

    @Test func senderKeyScheduleMatchesTheRFC() throws {
        let sender = try HPKE.setupBaseSender(
            recipientPublicKey: Self.pkRm, info: Self.info, ephemeralPrivateKey: Self.skEm)
        #expect(sender.encapsulatedKey == Self.pkEm)
        #expect(sender.schedule.key == Self.key)
        #expect(sender.schedule.baseNonce == Self.baseNonce)
        #expect(sender.schedule.exporterSecret == Self.exporterSecret)
    }

    @Test func sealingReproducesEveryPublishedCiphertext() throws {
        var sender = try HPKE.setupBaseSender(
            recipientPublicKey: Self.pkRm, info: Self.info, ephemeralPrivateKey: Self.skEm)
        var produced: [Int: [UInt8]] = [:]
        let wanted = Dictionary(uniqueKeysWithValues: Self.encryptions.map { ($0.0, $0.1) })
        for sequence in 0...255 {
            let aad = wanted[sequence] ?? Array("Count-\(sequence)".utf8)
            produced[sequence] = try sender.seal(Self.plaintext, aad: aad)
        }
        for (sequence, _, ciphertext) in Self.encryptions {
            #expect(produced[sequence] == ciphertext, "sequence \(sequence)")
        }
    }

    @Test func recipientOpensThePublishedCiphertexts() throws {
        var recipient = try HPKE.setupBaseRecipient(
            encapsulatedKey: Self.pkEm, recipientPrivateKey: Self.skRm, info: Self.info)
        #expect(recipient.schedule.key == Self.key)
        #expect(try recipient.open(Self.encryptions[0].2, aad: Self.encryptions[0].1) == Self.plaintext)
        #expect(try recipient.open(Self.encryptions[1].2, aad: Self.encryptions[1].1) == Self.plaintext)
    }

    @Test func exportsMatchTheRFC() throws {
        let recipient = try HPKE.setupBaseRecipient(
            encapsulatedKey: Self.pkEm, recipientPrivateKey: Self.skRm, info: Self.info)
        #expect(
            recipient.export([], length: 32) == hex("4bbd6243b8bb54cec311fac9df81841b6fd61f56538a775e7c80a9f40160606e"))
    }

    @Test func aTamperedCiphertextIsRejected() throws {
        var sealed = Self.encryptions[0].2
        sealed[3] ^= 1
        var recipient = try HPKE.setupBaseRecipient(
            encapsulatedKey: Self.pkEm, recipientPrivateKey: Self.skRm, info: Self.info)
        #expect(throws: CryptoError.authenticationFailed) { try recipient.open(sealed, aad: Self.encryptions[0].1) }
    }

    @Test func singleShotRoundTripUsesAFreshEphemeralKeyEachTime() throws {
        let sk = X25519.generatePrivateKey()
        let pk = try X25519.publicKey(for: sk)
        let a = try HPKE.seal(Array("Ana".utf8), to: pk, info: Array("info".utf8), aad: Array("n1".utf8))
        let b = try HPKE.seal(Array("Ana".utf8), to: pk, info: Array("info".utf8), aad: Array("n1".utf8))
        #expect(a != b)
        #expect(try HPKE.open(a, privateKey: sk, info: Array("info".utf8), aad: Array("n1".utf8)) == Array("Ana".utf8))
        #expect(throws: CryptoError.authenticationFailed) {
            try HPKE.open(a, privateKey: sk, info: Array("info".utf8), aad: Array("n2".utf8))
        }
    }
}

func hex(_ text: String) -> [UInt8] {
    var out: [UInt8] = []
    var index = text.startIndex
    while index < text.endIndex {
        let next = text.index(index, offsetBy: 2)
        out.append(UInt8(text[index..<next], radix: 16)!)
        index = next
    }
    return out
}
