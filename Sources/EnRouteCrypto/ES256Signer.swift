import COpenSSL

/// ES256 (ECDSA P-256 with SHA-256) JSON Web Tokens, as APNs token auth needs.
///
/// The key is a PKCS#8 PEM, the format of an APNs `.p8` file. Signatures are JOSE R‖S, 64 bytes.
public final class ES256Signer: @unchecked Sendable {
    // Read-only after init; libcrypto keys are safe to use from several threads.
    private let key: OpaquePointer

    /// A signer for the PKCS#8 PEM private key in `pem`.
    public init(pem: String) throws {
        let bytes = Array(pem.utf8)
        guard let bio = bytes.withUnsafeBufferPointer({ BIO_new_mem_buf($0.baseAddress, Int32($0.count)) }) else {
            throw CryptoError.openSSL("BIO_new_mem_buf")
        }
        defer { BIO_free(bio) }
        guard let key = PEM_read_bio_PrivateKey(bio, nil, nil, nil) else {
            throw CryptoError.invalidInput("not a PEM private key")
        }
        guard EVP_PKEY_get_base_id(key) == EVP_PKEY_EC, EVP_PKEY_get_bits(key) == 256 else {
            EVP_PKEY_free(key)
            throw CryptoError.invalidInput("an ES256 key must be an EC P-256 key")
        }
        self.key = key
    }

    deinit { EVP_PKEY_free(key) }

    /// A new P-256 private key as a PKCS#8 PEM (for tests and local stand-ins).
    public static func generatePrivateKeyPEM() throws -> String {
        guard let ctx = EVP_PKEY_CTX_new_id(EVP_PKEY_EC, nil) else { throw CryptoError.openSSL("EVP_PKEY_CTX_new_id") }
        defer { EVP_PKEY_CTX_free(ctx) }
        var key: OpaquePointer?
        guard EVP_PKEY_keygen_init(ctx) == 1, EVP_PKEY_CTX_set_ec_paramgen_curve_nid(ctx, NID_X9_62_prime256v1) == 1,
            EVP_PKEY_keygen(ctx, &key) == 1, let key
        else { throw CryptoError.openSSL("EVP_PKEY_keygen") }
        defer { EVP_PKEY_free(key) }
        guard let bio = BIO_new(BIO_s_mem()) else { throw CryptoError.openSSL("BIO_new") }
        defer { BIO_free(bio) }
        guard PEM_write_bio_PrivateKey(bio, key, nil, nil, 0, nil, nil) == 1 else {
            throw CryptoError.openSSL("PEM_write_bio_PrivateKey")
        }
        var pointer: UnsafeMutableRawPointer?
        let length = BIO_ctrl(bio, BIO_CTRL_INFO, 0, &pointer)
        guard length > 0, let pointer else { throw CryptoError.openSSL("BIO_ctrl") }
        return String(decoding: UnsafeRawBufferPointer(start: pointer, count: length), as: UTF8.self)
    }

    /// The 64-byte JOSE signature (R‖S) of `message`.
    public func signature(_ message: [UInt8]) throws -> [UInt8] {
        guard let md = EVP_MD_CTX_new() else { throw CryptoError.openSSL("EVP_MD_CTX_new") }
        defer { EVP_MD_CTX_free(md) }
        guard EVP_DigestSignInit(md, nil, EVP_sha256(), nil, key) == 1 else {
            throw CryptoError.openSSL("EVP_DigestSignInit")
        }
        var length = 0
        guard EVP_DigestSign(md, nil, &length, message, message.count) == 1 else {
            throw CryptoError.openSSL("EVP_DigestSign")
        }
        var der = [UInt8](repeating: 0, count: length)
        guard EVP_DigestSign(md, &der, &length, message, message.count) == 1 else {
            throw CryptoError.openSSL("EVP_DigestSign")
        }
        let sig: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var p: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_ECDSA_SIG(nil, &p, length)
        }
        guard let sig else { throw CryptoError.openSSL("d2i_ECDSA_SIG") }
        defer { ECDSA_SIG_free(sig) }
        var out = [UInt8](repeating: 0, count: 64)
        guard let r = ECDSA_SIG_get0_r(sig), let s = ECDSA_SIG_get0_s(sig) else {
            throw CryptoError.openSSL("ECDSA_SIG_get0")
        }
        let ok = out.withUnsafeMutableBufferPointer { p in
            BN_bn2binpad(r, p.baseAddress, 32) == 32 && BN_bn2binpad(s, p.baseAddress! + 32, 32) == 32
        }
        guard ok else { throw CryptoError.openSSL("BN_bn2binpad") }
        return out
    }

    /// A compact JWS with header `{"alg":"ES256","kid":…}` over `claims` (a JSON object, keys sorted).
    public func token(keyID: String, claims: [String: any Sendable]) throws -> String {
        let header = try JSONText.object(["alg": "ES256", "kid": keyID])
        let input =
            Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(Array(try JSONText.object(claims).utf8))
        return input + "." + Base64URL.encode(try signature(Array(input.utf8)))
    }
}
