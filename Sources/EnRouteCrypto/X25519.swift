import COpenSSL

/// X25519 Diffie-Hellman (RFC 7748) on raw 32-byte keys, through libcrypto.
public enum X25519 {
    /// The length of private keys, public keys and shared secrets.
    public static let keyLength = 32

    /// A fresh private key from the CSPRNG (clamping happens at use, as RFC 7748 says).
    public static func generatePrivateKey() -> [UInt8] { Digest.randomBytes(keyLength) }

    /// The public key for `privateKey`.
    public static func publicKey(for privateKey: [UInt8]) throws -> [UInt8] {
        let key = try makePrivate(privateKey)
        defer { EVP_PKEY_free(key) }
        var out = [UInt8](repeating: 0, count: keyLength)
        var length = keyLength
        guard EVP_PKEY_get_raw_public_key(key, &out, &length) == 1, length == keyLength else {
            throw CryptoError.openSSL("EVP_PKEY_get_raw_public_key")
        }
        return out
    }

    /// The shared secret DH(privateKey, peerPublicKey); fails on an all-zero result (a low-order peer key).
    public static func sharedSecret(privateKey: [UInt8], peerPublicKey: [UInt8]) throws -> [UInt8] {
        guard peerPublicKey.count == keyLength else {
            throw CryptoError.invalidInput("an X25519 public key is 32 bytes")
        }
        let mine = try makePrivate(privateKey)
        defer { EVP_PKEY_free(mine) }
        guard
            let peer = peerPublicKey.withUnsafeBufferPointer({
                EVP_PKEY_new_raw_public_key(EVP_PKEY_X25519, nil, $0.baseAddress, $0.count)
            })
        else { throw CryptoError.invalidInput("not an X25519 public key") }
        defer { EVP_PKEY_free(peer) }
        guard let ctx = EVP_PKEY_CTX_new(mine, nil) else { throw CryptoError.openSSL("EVP_PKEY_CTX_new") }
        defer { EVP_PKEY_CTX_free(ctx) }
        guard EVP_PKEY_derive_init(ctx) == 1, EVP_PKEY_derive_set_peer(ctx, peer) == 1 else {
            throw CryptoError.openSSL("EVP_PKEY_derive_set_peer")
        }
        var out = [UInt8](repeating: 0, count: keyLength)
        var length = keyLength
        guard EVP_PKEY_derive(ctx, &out, &length) == 1, length == keyLength else {
            throw CryptoError.openSSL("EVP_PKEY_derive (low-order public key?)")
        }
        guard out.contains(where: { $0 != 0 }) else { throw CryptoError.invalidInput("the shared secret is all zeros") }
        return out
    }

    private static func makePrivate(_ bytes: [UInt8]) throws -> OpaquePointer {
        guard bytes.count == keyLength else { throw CryptoError.invalidInput("an X25519 private key is 32 bytes") }
        guard
            let key = bytes.withUnsafeBufferPointer({
                EVP_PKEY_new_raw_private_key(EVP_PKEY_X25519, nil, $0.baseAddress, $0.count)
            })
        else {
            throw CryptoError.openSSL("EVP_PKEY_new_raw_private_key")
        }
        return key
    }
}
