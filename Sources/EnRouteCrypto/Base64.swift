/// Base64url (RFC 4648 §5) as JOSE uses it (RFC 7515 §2): without padding, one spelling for each byte string.
///
/// Written out over bytes rather than through Foundation's base64 and three string replacements: every bearer token a
/// server has not seen yet is decoded here, and the string work was most of the cost.
public enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// Each byte's six bits, or 0xFF for a byte outside the alphabet.
    private static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (i, c) in alphabet.enumerated() { table[Int(c)] = UInt8(i) }
        return table
    }()

    /// Encodes without padding, with `-` and `_`.
    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        let input = Array(bytes)
        var out: [UInt8] = []
        out.reserveCapacity((input.count * 4 + 2) / 3)
        var i = 0
        // Each group of up to three bytes is four (or, at the end, two or three) characters of six bits each.
        while i < input.count {
            let count = min(3, input.count - i)
            var n = UInt32(input[i]) << 16
            if count > 1 { n |= UInt32(input[i + 1]) << 8 }
            if count > 2 { n |= UInt32(input[i + 2]) }
            for shift in stride(from: 18, through: 18 - 6 * count, by: -6) {
                out.append(alphabet[Int(n >> UInt32(shift) & 63)])
            }
            i += 3
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Decodes base64url in its one canonical spelling, so that a token has one form only: nil for a byte outside the
    /// alphabet, any padding (`=` is not in it), a length no encoding has, or a last character whose bits past the end
    /// of the data are not zero (RFC 4648 §3.5: `YQ` is "a"; `YR` and `YQ==` are refused).
    public static func decode(_ text: some StringProtocol) -> [UInt8]? {
        let bytes = Array(text.utf8)
        guard bytes.count % 4 != 1 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 3 / 4)
        var accumulator: UInt32 = 0, bits = 0
        for byte in bytes {
            let value = values[Int(byte)]
            guard value != 0xFF else { return nil }
            accumulator = accumulator << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
                accumulator &= (1 << UInt32(bits)) - 1
            }
        }
        // What is left are the last character's pad bits (2 or 4 of them), which the encoder always leaves zero.
        guard accumulator == 0 else { return nil }
        return out
    }
}
