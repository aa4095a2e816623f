// iOS only: the device key pair in the keychain access group the app shares with its service extension. No logic.
#if canImport(Security) && canImport(CryptoKit) && canImport(UIKit)
import CryptoKit
import Foundation
import Security
public import NotificationsKit

/// `KeyStore` in the keychain, in the access group the app shares with its notification service extension, readable
/// while the device is locked once it has been unlocked after boot (`AfterFirstUnlockThisDeviceOnly`).
public struct NotificationKeychainKeyStore: KeyStore {
    private let accessGroup: KeychainAccessGroup
    private let service = "com.enroute.push"
    private let account = "push-content-key"

    /// A store in `accessGroup`, which both targets read from their Info.plist (`KeychainAccessGroup.infoKey`).
    public init(accessGroup: KeychainAccessGroup) {
        self.accessGroup = accessGroup
    }

    /// Makes a new pair, replacing any, and returns its public half.
    public func makeKeyPair() async throws -> [UInt8] {
        let key = Curve25519.KeyAgreement.PrivateKey()
        await deleteKeyPair()
        let add = base.merging([
            kSecValueData as String: key.rawRepresentation,
            kSecAttrAccessible as String: kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly,
        ]) { $1 }
        let status = SecItemAdd(add as CFDictionary, nil)
        guard status == errSecSuccess else { throw NSError(domain: NSOSStatusErrorDomain, code: Int(status)) }
        return [UInt8](key.publicKey.rawRepresentation)
    }

    /// The public half of the stored pair, if any.
    public func publicKey() async -> [UInt8]? {
        guard let raw = await privateKey(), let key = try? Curve25519.KeyAgreement.PrivateKey(rawRepresentation: raw)
        else { return nil }
        return [UInt8](key.publicKey.rawRepresentation)
    }

    /// The stored private key, if any (the service extension's read).
    public func privateKey() async -> [UInt8]? {
        var result: CFTypeRef?
        let query = base.merging([kSecReturnData as String: true, kSecMatchLimit as String: kSecMatchLimitOne]) { $1 }
        guard SecItemCopyMatching(query as CFDictionary, &result) == errSecSuccess, let data = result as? Data
        else { return nil }
        return [UInt8](data)
    }

    /// Deletes the pair.
    public func deleteKeyPair() async { SecItemDelete(base as CFDictionary) }

    private var base: [String: Any] {
        [
            kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service,
            kSecAttrAccount as String: account, kSecAttrAccessGroup as String: accessGroup.rawValue,
        ]
    }
}
#endif
