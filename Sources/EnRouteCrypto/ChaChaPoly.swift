import COpenSSL

/// ChaCha20-Poly1305 (RFC 8439) through libcrypto: 32-byte key, 12-byte nonce, 16-byte tag appended.
public enum ChaChaPoly {
    public static let keyLength = 32
    public static let nonceLength = 12
    public static let tagLength = 16

    /// Encrypts `plaintext`, returning ciphertext ‖ tag.
    public static func seal(key: [UInt8], nonce: [UInt8], aad: [UInt8], plaintext: [UInt8]) throws -> [UInt8] {
        try check(key, nonce)
        guard let ctx = EVP_CIPHER_CTX_new() else { throw CryptoError.openSSL("EVP_CIPHER_CTX_new") }
        defer { EVP_CIPHER_CTX_free(ctx) }
        guard EVP_EncryptInit_ex(ctx, EVP_chacha20_poly1305(), nil, nil, nil) == 1,
            EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_IVLEN, Int32(nonceLength), nil) == 1,
            EVP_EncryptInit_ex(ctx, nil, nil, key, nonce) == 1
        else { throw CryptoError.openSSL("EVP_EncryptInit_ex") }
        var length: Int32 = 0
        if !aad.isEmpty {
            guard EVP_EncryptUpdate(ctx, nil, &length, aad, Int32(aad.count)) == 1 else {
                throw CryptoError.openSSL("aad")
            }
        }
        var out = [UInt8](repeating: 0, count: plaintext.count + tagLength)
        var written = 0
        if !plaintext.isEmpty {
            guard EVP_EncryptUpdate(ctx, &out, &length, plaintext, Int32(plaintext.count)) == 1 else {
                throw CryptoError.openSSL("EVP_EncryptUpdate")
            }
            written = Int(length)
        }
        let finalOK = out.withUnsafeMutableBufferPointer { p in
            EVP_EncryptFinal_ex(ctx, p.baseAddress! + written, &length)
        }
        guard finalOK == 1 else { throw CryptoError.openSSL("EVP_EncryptFinal_ex") }
        var tag = [UInt8](repeating: 0, count: tagLength)
        guard EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, Int32(tagLength), &tag) == 1 else {
            throw CryptoError.openSSL("GET_TAG")
        }
        return Array(out.prefix(plaintext.count)) + tag
    }

    /// Decrypts ciphertext ‖ tag; throws `authenticationFailed` when anything was altered.
    public static func open(key: [UInt8], nonce: [UInt8], aad: [UInt8], ciphertext sealed: [UInt8]) throws -> [UInt8] {
        try check(key, nonce)
        guard sealed.count >= tagLength else { throw CryptoError.authenticationFailed }
        let body = Array(sealed.dropLast(tagLength))
        var tag = Array(sealed.suffix(tagLength))
        guard let ctx = EVP_CIPHER_CTX_new() else { throw CryptoError.openSSL("EVP_CIPHER_CTX_new") }
        defer { EVP_CIPHER_CTX_free(ctx) }
        guard EVP_DecryptInit_ex(ctx, EVP_chacha20_poly1305(), nil, nil, nil) == 1,
            EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_IVLEN, Int32(nonceLength), nil) == 1,
            EVP_DecryptInit_ex(ctx, nil, nil, key, nonce) == 1
        else { throw CryptoError.openSSL("EVP_DecryptInit_ex") }
        var length: Int32 = 0
        if !aad.isEmpty {
            guard EVP_DecryptUpdate(ctx, nil, &length, aad, Int32(aad.count)) == 1 else {
                throw CryptoError.openSSL("aad")
            }
        }
        var out = [UInt8](repeating: 0, count: body.count + tagLength)
        var written = 0
        if !body.isEmpty {
            guard EVP_DecryptUpdate(ctx, &out, &length, body, Int32(body.count)) == 1 else {
                throw CryptoError.authenticationFailed
            }
            written = Int(length)
        }
        guard EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, Int32(tagLength), &tag) == 1 else {
            throw CryptoError.openSSL("SET_TAG")
        }
        let finalOK = out.withUnsafeMutableBufferPointer { p in
            EVP_DecryptFinal_ex(ctx, p.baseAddress! + written, &length)
        }
        guard finalOK == 1 else { throw CryptoError.authenticationFailed }
        return Array(out.prefix(body.count))
    }

    private static func check(_ key: [UInt8], _ nonce: [UInt8]) throws {
        guard key.count == keyLength else { throw CryptoError.invalidInput("a ChaCha20-Poly1305 key is 32 bytes") }
        guard nonce.count == nonceLength else {
            throw CryptoError.invalidInput("a ChaCha20-Poly1305 nonce is 12 bytes")
        }
    }
}
