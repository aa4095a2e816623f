import Foundation

/// Opens the payload's `secret`: HPKE (RFC 9180, X25519 / HKDF-SHA256 / ChaCha20-Poly1305) to the device
/// key, base64 of enc ‖ ciphertext, with the notification id as associated data.
public enum NotificationSecret {
    /// The HPKE `info` the server seals with.
    public static let info = Array("EnRoute push secret v1".utf8)

    /// The plaintext (the rider's first name), or nil when it does not open.
    public static func open(
        _ secret: String, notificationID: NotificationID, privateKey: [UInt8],
        cipher: any HPKECipher = PlatformHPKECipher()
    ) -> String? {
        guard let sealed = Data(base64Encoded: secret),
            let plain = try? cipher.open(
                Array(sealed), privateKey: privateKey, info: info, aad: Array(notificationID.rawValue.utf8)),
            let text = String(bytes: plain, encoding: .utf8), !text.isEmpty, text.count <= 64
        else { return nil }
        return text
    }
}
