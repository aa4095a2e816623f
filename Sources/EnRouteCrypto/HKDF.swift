/// HKDF with SHA-256 (RFC 5869), built on libcrypto's HMAC.
public enum HKDF {
    /// HKDF-Extract: a pseudorandom key from `ikm` under `salt` (an empty salt means 32 zero bytes).
    public static func extract(salt: [UInt8], ikm: [UInt8]) -> [UInt8] {
        Digest.hmacSHA256(key: salt.isEmpty ? [UInt8](repeating: 0, count: 32) : salt, message: ikm)
    }

    /// HKDF-Expand: `length` bytes (at most 255 × 32) from `prk` and `info`.
    public static func expand(prk: [UInt8], info: [UInt8], length: Int) -> [UInt8] {
        precondition(length <= 255 * 32, "HKDF-Expand output too long")
        var out: [UInt8] = []
        var block: [UInt8] = []
        var counter: UInt8 = 1
        while out.count < length {
            block = Digest.hmacSHA256(key: prk, message: block + info + [counter])
            out += block
            counter &+= 1
        }
        return Array(out.prefix(length))
    }
}
