/// A phone number in E.164 form: `+`, then 8 to 15 digits whose first (the country code's) is not 0.
///
/// The only way to make one is `init?(_:)`, so a stored or relayed number has always been checked. Its
/// `description` masks all but the last two digits, so one printed into a log line gives nothing away.
public struct E164PhoneNumber: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The number as dialled, `+358401234567`.
    public let e164: String

    /// The number `text` names in E.164 form; nil when it is not one (spaces, dashes, a missing `+` or a leading 0).
    public init?(_ text: String) {
        let utf8 = Array(text.utf8)
        guard utf8.first == UInt8(ascii: "+") else { return nil }
        let digits = utf8.dropFirst()
        guard (8...15).contains(digits.count), digits.allSatisfy({ (0x30...0x39).contains($0) }), digits.first != 0x30
        else { return nil }
        e164 = text
    }

    /// What is wrong with a number that does not parse, for a problem's detail.
    public static let rule =
        "must be an E.164 number: '+' then 8 to 15 digits, the country code not starting with 0 (e.g. +358401234567)"

    /// `+•••••••••67`: never the whole number.
    public var description: String { "+" + String(repeating: "•", count: max(0, e164.count - 3)) + e164.suffix(2) }

    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let number = E164PhoneNumber(text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: Self.rule))
        }
        self = number
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(e164)
    }
}
