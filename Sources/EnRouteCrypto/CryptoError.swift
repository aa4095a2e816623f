/// A libcrypto operation that failed, or input of the wrong shape.
public enum CryptoError: Error, Equatable, Sendable {
    /// A key, nonce or ciphertext has the wrong length or form.
    case invalidInput(String)
    /// The AEAD tag did not verify: the ciphertext, key, nonce or associated data is wrong.
    case authenticationFailed
    /// OpenSSL reported an error in the named step.
    case openSSL(String)
}
