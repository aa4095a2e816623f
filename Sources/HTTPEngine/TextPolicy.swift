import Foundation

/// Text the API takes in never holds U+0000: PostgreSQL's client library ends a text parameter at the first NUL (SQLite
/// keeps it), so the same request would store different strings on the two stores. A JSON body carrying one is refused
/// as it is decoded, 422 naming where it is. (Query arguments are not stored; each route checks its own, and the OSRM
/// routes answer in OSRM's words.)
enum TextPolicy {
    /// The refusal for the string at `pointer`.
    static func refusal(_ pointer: String) -> HTTPError { .invalid(pointer, "must not contain U+0000") }

    /// The JSON pointer of the first string (a value or a member's name) in `body` that holds U+0000; nil when none
    /// does or the body is not JSON (its decoding says so). JSON can carry the character only as the escape `\u0000`,
    /// so a body without one is not parsed twice.
    static func nulPointer(inJSON body: [UInt8]) -> String? {
        guard mayHoldNUL(body),
            let value = try? JSONSerialization.jsonObject(with: Data(body), options: [.fragmentsAllowed])
        else {
            return nil
        }
        return nulPointer(in: value, at: "")
    }

    /// Whether `body` holds the escape `\u0000` (or a backslash before `u0000`, which parsing then tells apart): one
    /// pass over the bytes, where a generic `firstRange(of:)` cost more than the rest of decoding a small body.
    static func mayHoldNUL(_ body: [UInt8]) -> Bool {
        body.withUnsafeBufferPointer { bytes in
            guard bytes.count >= 6 else { return false }
            var i = 0
            while i <= bytes.count - 6 {
                if bytes[i] == UInt8(ascii: "\\"), bytes[i + 1] == UInt8(ascii: "u"), bytes[i + 2] == UInt8(ascii: "0"),
                    bytes[i + 3] == UInt8(ascii: "0"), bytes[i + 4] == UInt8(ascii: "0"),
                    bytes[i + 5] == UInt8(ascii: "0")
                {
                    return true
                }
                i += 1
            }
            return false
        }
    }

    private static func nulPointer(in value: Any, at pointer: String) -> String? {
        switch value {
        case let text as String:
            return text.contains("\0") ? (pointer.isEmpty ? "/" : pointer) : nil
        case let array as [Any]:
            for (index, element) in array.enumerated() {
                if let found = nulPointer(in: element, at: pointer + "/\(index)") { return found }
            }
            return nil
        case let object as [String: Any]:
            for key in object.keys.sorted() {
                let member = pointer + "/" + escaped(key)
                if key.contains("\0") { return member }
                if let found = nulPointer(in: object[key] as Any, at: member) { return found }
            }
            return nil
        default:
            return nil
        }
    }

    /// A name as one JSON pointer token (RFC 6901), with U+0000 written as its JSON escape so the problem can carry it.
    private static func escaped(_ name: String) -> String {
        name.replacingOccurrences(of: "~", with: "~0").replacingOccurrences(of: "/", with: "~1")
            .replacingOccurrences(of: "\0", with: #"\u0000"#)
    }
}
