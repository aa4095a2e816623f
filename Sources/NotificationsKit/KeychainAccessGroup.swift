/// The keychain access group the app and its notification service extension share, so the extension can read the
/// device key the app made. Both read it from their Info.plist; there is no default, since a wrong group makes every
/// personal notification fall back to its generic text without a word.
public struct KeychainAccessGroup: Sendable, Equatable {
    /// The Info.plist key both targets set (to `$(AppIdentifierPrefix)com.example.shared`).
    public static let infoKey = "EnRouteKeychainAccessGroup"

    /// Why a configured group cannot be used.
    public enum Invalid: Error, Equatable, CustomStringConvertible {
        /// The Info.plist has no string under `infoKey`.
        case missing
        /// The value is not "TEAMID.identifier".
        case malformed(String)

        public var description: String {
            switch self {
            case .missing: "Info.plist has no \(KeychainAccessGroup.infoKey) string"
            case .malformed(let value):
                "\(KeychainAccessGroup.infoKey) is \"\(value)\": expected the team prefix and a group, "
                    + "like ABCDE12345.com.example.shared"
            }
        }
    }

    /// The group, "TEAMID.identifier".
    public let rawValue: String

    /// A group from its full name; throws unless it is a team prefix, a dot and an identifier, with no spaces and no
    /// unexpanded build setting.
    public init(_ value: String) throws {
        let parts = value.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        let allowed = { (c: Character) in c.isASCII && (c.isLetter || c.isNumber || c == "." || c == "-" || c == "_") }
        guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty, value.allSatisfy(allowed) else {
            throw Invalid.malformed(value)
        }
        rawValue = value
    }

    /// The group named in an Info.plist (`Bundle.main.infoDictionary`).
    public init(infoDictionary: [String: Any]) throws {
        guard let value = infoDictionary[Self.infoKey] as? String else { throw Invalid.missing }
        try self.init(value)
    }
}
