/// Stripe's request encoding: `application/x-www-form-urlencoded` pairs in order, nested keys written as
/// `metadata[enroute_key]` with the brackets left as they are (as Stripe's own libraries send them).
struct StripeForm: Equatable {
    private(set) var pairs: [(key: String, value: String)] = []

    static func == (lhs: StripeForm, rhs: StripeForm) -> Bool { lhs.encoded == rhs.encoded }

    /// Appends `key=value`.
    mutating func add(_ key: String, _ value: String) { pairs.append((key, value)) }

    /// The body: each key and value percent-encoded but for unreserved characters (and brackets in keys).
    var encoded: String {
        pairs.map { Self.escape($0.key, keepBrackets: true) + "=" + Self.escape($0.value, keepBrackets: false) }.joined(
            separator: "&")
    }

    /// `text` percent-encoded for a form or a query: RFC 3986's unreserved characters stay, the rest are `%XX` of
    /// UTF-8.
    static func escape(_ text: String, keepBrackets: Bool) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            case UInt8(ascii: "[") where keepBrackets, UInt8(ascii: "]") where keepBrackets:
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = Array("0123456789ABCDEF".utf8)
                out += "%" + String(decoding: [hex[Int(byte >> 4)], hex[Int(byte & 0x0f)]], as: UTF8.self)
            }
        }
        return out
    }
}
