// Apple platforms only: the device key pair in a keychain access group shared with the service extension. No logic.
#if canImport(Security) && canImport(CryptoKit) && canImport(UIKit)
import CryptoKit
import Foundation
import Security
import NotificationsKit

/// `KeyStore` in the keychain (`kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly`, readable while locked after first unlock).
struct NotificationKeychainKeyStore: KeyStore {
    let accessGroup: String
    let account = "push-content-key"

    func makeKeyPair() async throws -> [UInt8] {
        let key = Curve25519.KeyAgreement.PrivateKey()
        await deleteKeyPair()
        let add: [String: Any] = base.merging([kSecValueData as String: key.rawRepresentation,
                                               kSecAttrAccessible as String: kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly]) { $1 }
        let status = SecItemAdd(add as CFDictionary, nil)
        guard status == errSecSuccess else { throw NSError(domain: NSOSStatusErrorDomain, code: Int(status)) }
        return [UInt8](key.publicKey.rawRepresentation)
    }

    func publicKey() async -> [UInt8]? {
        guard let raw = await privateKey(), let key = try? Curve25519.KeyAgreement.PrivateKey(rawRepresentation: raw) else { return nil }
        return [UInt8](key.publicKey.rawRepresentation)
    }

    func privateKey() async -> [UInt8]? {
        var result: CFTypeRef?
        let query = base.merging([kSecReturnData as String: true, kSecMatchLimit as String: kSecMatchLimitOne]) { $1 }
        guard SecItemCopyMatching(query as CFDictionary, &result) == errSecSuccess, let data = result as? Data else { return nil }
        return [UInt8](data)
    }

    func deleteKeyPair() async { SecItemDelete(base as CFDictionary) }

    private var base: [String: Any] {
        [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "com.enroute.push",
         kSecAttrAccount as String: account, kSecAttrAccessGroup as String: accessGroup]
    }
}
#endif
