/// A value bound to a statement parameter (`$1`, `$2`, …).
public enum PostgresValue: Sendable, Equatable {
    case null, int(Int64), double(Double), text(String), bytea([UInt8]), bool(Bool)

    /// An optional text value: NULL when nil.
    public static func text(_ value: String?) -> PostgresValue { value.map { .text($0) } ?? .null }
    /// An integer.
    public static func int(_ value: Int) -> PostgresValue { .int(Int64(value)) }
}

/// One result row; columns are read by index, in the text form the server sent (bytea as hex).
public struct PostgresRow: Sendable {
    let values: [String?]

    /// The column as text; nil when NULL.
    public func text(_ column: Int) -> String? { values[column] }
    /// True when the column is NULL.
    public func isNull(_ column: Int) -> Bool { values[column] == nil }
    /// The column as an integer; 0 when NULL.
    public func int(_ column: Int) -> Int64 { values[column].flatMap { Int64($0) } ?? 0 }
    /// The column as a double; 0 when NULL.
    public func double(_ column: Int) -> Double { values[column].flatMap(Self.parseDouble) ?? 0 }
    /// The column as a boolean; false when NULL.
    public func bool(_ column: Int) -> Bool { values[column] == "t" }
    /// A bytea column's bytes; empty when NULL.
    public func bytes(_ column: Int) -> [UInt8] { values[column].map(Self.unhex) ?? [] }

    static func parseDouble(_ text: String) -> Double? {
        switch text {
        case "Infinity": .infinity
        case "-Infinity": -.infinity
        case "NaN": .nan
        default: Double(text)
        }
    }

    /// Decodes bytea's hex output (`\x0a1b…`).
    static func unhex(_ text: String) -> [UInt8] {
        var utf8 = Array(text.utf8)
        guard utf8.count >= 2, utf8[0] == UInt8(ascii: "\\"), utf8[1] == UInt8(ascii: "x") else { return utf8 }
        utf8.removeFirst(2)
        var out = [UInt8](repeating: 0, count: utf8.count / 2)
        func nibble(_ c: UInt8) -> UInt8 {
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
            default: c &- UInt8(ascii: "A") &+ 10
            }
        }
        for i in 0..<out.count { out[i] = nibble(utf8[2 * i]) << 4 | nibble(utf8[2 * i + 1]) }
        return out
    }
}
