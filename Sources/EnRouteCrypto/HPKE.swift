/// HPKE (RFC 9180) base mode for one suite: DHKEM(X25519, HKDF-SHA256), HKDF-SHA256, ChaCha20-Poly1305.
///
/// This is the suite CryptoKit calls `HPKE.Ciphersuite(kem: .Curve25519_HKDF_SHA256, kdf: .HKDF_SHA256,
/// aead: .chaChaPoly)`, so an iOS 17 app opens what the server seals here.
public enum HPKE {
    static let kemID: UInt16 = 0x0020
    static let kdfID: UInt16 = 0x0001
    static let aeadID: UInt16 = 0x0003
    static let kemSuite: [UInt8] = Array("KEM".utf8) + be(kemID, 2)
    static let suite: [UInt8] = Array("HPKE".utf8) + be(kemID, 2) + be(kdfID, 2) + be(aeadID, 2)

    /// The encapsulated key's length (an X25519 public key).
    public static let encapsulatedKeyLength = 32

    /// The key schedule's outputs, shared by sender and recipient.
    public struct KeySchedule: Sendable, Equatable {
        public let key: [UInt8]
        public let baseNonce: [UInt8]
        public let exporterSecret: [UInt8]
    }

    /// A sender's context: seals messages in order, numbering them from 0.
    public struct SenderContext: Sendable {
        /// The encapsulated key to send with the ciphertexts.
        public let encapsulatedKey: [UInt8]
        public let schedule: KeySchedule
        /// The number of messages sealed so far.
        public private(set) var sequence: UInt64 = 0

        /// Seals the next message.
        public mutating func seal(_ plaintext: [UInt8], aad: [UInt8] = []) throws -> [UInt8] {
            let out = try ChaChaPoly.seal(
                key: schedule.key, nonce: HPKE.nonce(schedule.baseNonce, sequence), aad: aad, plaintext: plaintext)
            sequence += 1
            return out
        }

        /// A secret derived from the context (RFC 9180 §5.3).
        public func export(_ context: [UInt8], length: Int) -> [UInt8] {
            HPKE.labeledExpand(schedule.exporterSecret, "sec", context, length, suite: HPKE.suite)
        }
    }

    /// A recipient's context: opens messages in the order they were sealed.
    public struct RecipientContext: Sendable {
        public let schedule: KeySchedule
        /// The number of messages opened so far.
        public private(set) var sequence: UInt64 = 0

        /// Opens the next message; throws `CryptoError.authenticationFailed` when it does not verify.
        public mutating func open(_ ciphertext: [UInt8], aad: [UInt8] = []) throws -> [UInt8] {
            let out = try ChaChaPoly.open(
                key: schedule.key, nonce: HPKE.nonce(schedule.baseNonce, sequence), aad: aad, ciphertext: ciphertext)
            sequence += 1
            return out
        }

        /// A secret derived from the context (RFC 9180 §5.3).
        public func export(_ context: [UInt8], length: Int) -> [UInt8] {
            HPKE.labeledExpand(schedule.exporterSecret, "sec", context, length, suite: HPKE.suite)
        }
    }

    /// A key pair derived from input keying material (RFC 9180 §7.1.3).
    public static func deriveKeyPair(ikm: [UInt8]) throws -> (privateKey: [UInt8], publicKey: [UInt8]) {
        let prk = labeledExtract([], "dkp_prk", ikm, suite: kemSuite)
        let sk = labeledExpand(prk, "sk", [], 32, suite: kemSuite)
        return (sk, try X25519.publicKey(for: sk))
    }

    /// SetupBaseS: encapsulates to `recipientPublicKey`. `ephemeralPrivateKey` is for test vectors only.
    public static func setupBaseSender(
        recipientPublicKey: [UInt8], info: [UInt8], ephemeralPrivateKey: [UInt8]? = nil
    ) throws -> SenderContext {
        let skE = ephemeralPrivateKey ?? X25519.generatePrivateKey()
        let pkE = try X25519.publicKey(for: skE)
        let dh = try X25519.sharedSecret(privateKey: skE, peerPublicKey: recipientPublicKey)
        let shared = extractAndExpand(dh: dh, kemContext: pkE + recipientPublicKey)
        return SenderContext(encapsulatedKey: pkE, schedule: keySchedule(sharedSecret: shared, info: info))
    }

    /// SetupBaseR: decapsulates `encapsulatedKey` with the recipient's private key.
    public static func setupBaseRecipient(
        encapsulatedKey: [UInt8], recipientPrivateKey: [UInt8], info: [UInt8]
    ) throws -> RecipientContext {
        let pkR = try X25519.publicKey(for: recipientPrivateKey)
        let dh = try X25519.sharedSecret(privateKey: recipientPrivateKey, peerPublicKey: encapsulatedKey)
        let shared = extractAndExpand(dh: dh, kemContext: encapsulatedKey + pkR)
        return RecipientContext(schedule: keySchedule(sharedSecret: shared, info: info))
    }

    /// Single-shot seal: the encapsulated key followed by the ciphertext (32 + plaintext + 16 bytes).
    public static func seal(
        _ plaintext: [UInt8], to recipientPublicKey: [UInt8], info: [UInt8], aad: [UInt8] = []
    ) throws -> [UInt8] {
        var sender = try setupBaseSender(recipientPublicKey: recipientPublicKey, info: info)
        return sender.encapsulatedKey + (try sender.seal(plaintext, aad: aad))
    }

    /// Single-shot open of `seal`'s output.
    public static func open(_ sealed: [UInt8], privateKey: [UInt8], info: [UInt8], aad: [UInt8] = []) throws -> [UInt8]
    {
        guard sealed.count >= encapsulatedKeyLength + ChaChaPoly.tagLength else {
            throw CryptoError.invalidInput("too short to be an HPKE message")
        }
        var recipient = try setupBaseRecipient(
            encapsulatedKey: Array(sealed.prefix(encapsulatedKeyLength)), recipientPrivateKey: privateKey, info: info)
        return try recipient.open(Array(sealed.dropFirst(encapsulatedKeyLength)), aad: aad)
    }

    // MARK: - RFC 9180 building blocks

    static func extractAndExpand(dh: [UInt8], kemContext: [UInt8]) -> [UInt8] {
        let prk = labeledExtract([], "eae_prk", dh, suite: kemSuite)
        return labeledExpand(prk, "shared_secret", kemContext, 32, suite: kemSuite)
    }

    /// KeySchedule for mode_base (no PSK).
    static func keySchedule(sharedSecret: [UInt8], info: [UInt8]) -> KeySchedule {
        let pskIDHash = labeledExtract([], "psk_id_hash", [], suite: suite)
        let infoHash = labeledExtract([], "info_hash", info, suite: suite)
        let context: [UInt8] = [0x00] + pskIDHash + infoHash
        let secret = labeledExtract(sharedSecret, "secret", [], suite: suite)
        return KeySchedule(
            key: labeledExpand(secret, "key", context, ChaChaPoly.keyLength, suite: suite),
            baseNonce: labeledExpand(secret, "base_nonce", context, ChaChaPoly.nonceLength, suite: suite),
            exporterSecret: labeledExpand(secret, "exp", context, 32, suite: suite))
    }

    static func labeledExtract(_ salt: [UInt8], _ label: String, _ ikm: [UInt8], suite: [UInt8]) -> [UInt8] {
        HKDF.extract(salt: salt, ikm: Array("HPKE-v1".utf8) + suite + Array(label.utf8) + ikm)
    }

    static func labeledExpand(
        _ prk: [UInt8], _ label: String, _ info: [UInt8], _ length: Int, suite: [UInt8]
    ) -> [UInt8] {
        HKDF.expand(
            prk: prk, info: be(UInt64(length), 2) + Array("HPKE-v1".utf8) + suite + Array(label.utf8) + info,
            length: length)
    }

    static func nonce(_ base: [UInt8], _ sequence: UInt64) -> [UInt8] {
        let seq = be(sequence, base.count)
        return zip(base, seq).map { $0 ^ $1 }
    }

    static func be<T: FixedWidthInteger>(_ value: T, _ count: Int) -> [UInt8] {
        (0..<count).map { i in
            let shift = (count - 1 - i) * 8
            return shift >= T.bitWidth ? 0 : UInt8(truncatingIfNeeded: value >> shift)
        }
    }
}
