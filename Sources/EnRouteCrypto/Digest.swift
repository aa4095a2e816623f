import COpenSSL

/// Hashes, MACs and encodings from OpenSSL's libcrypto.
public enum Digest {
    /// SHA-1 of `bytes` (20 bytes); used by the WebSocket handshake only.
    public static func sha1(_ bytes: some Collection<UInt8>) -> [UInt8] { digest(bytes, EVP_sha1(), 20) }

    /// SHA-256 of `bytes` (32 bytes).
    public static func sha256(_ bytes: some Collection<UInt8>) -> [UInt8] { digest(bytes, EVP_sha256(), 32) }

    /// HMAC-SHA256 of `message` under `key` (32 bytes).
    public static func hmacSHA256(key: some Collection<UInt8>, message: some Collection<UInt8>) -> [UInt8] {
        let k = Array(key), m = Array(message)
        var out = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 32
        k.withUnsafeBufferPointer { kp in
            m.withUnsafeBufferPointer { mp in
                _ = HMAC(EVP_sha256(), kp.baseAddress, Int32(kp.count), mp.baseAddress, mp.count, &out, &length)
            }
        }
        return Array(out.prefix(Int(length)))
    }

    /// `bytes` as lowercase hexadecimal, two digits a byte, from a table (not `String(format:)` per byte: hot paths
    /// hash bodies).
    public static func hex(_ bytes: some Collection<UInt8>) -> String {
        let digits = hexDigits
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// Compares two byte strings in time independent of where they differ.
    public static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var diff: UInt8 = 0
        for i in 0..<a.count { diff |= a[i] ^ b[i] }
        return diff == 0
    }

    /// `count` bytes from OpenSSL's CSPRNG.
    public static func randomBytes(_ count: Int) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        _ = RAND_bytes(&out, Int32(count))
        return out
    }

    private static func digest(_ bytes: some Collection<UInt8>, _ md: OpaquePointer?, _ size: Int) -> [UInt8] {
        let input = Array(bytes)
        var out = [UInt8](repeating: 0, count: size)
        var length: UInt32 = 0
        input.withUnsafeBufferPointer { p in
            _ = EVP_Digest(p.baseAddress, p.count, &out, &length, md, nil)
        }
        return out
    }
}
