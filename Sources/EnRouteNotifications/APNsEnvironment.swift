/// Which APNs service a device token belongs to; tokens are bound to one.
public enum APNsEnvironment: String, Codable, Sendable, CaseIterable {
    case sandbox, production

    /// Reads the registration's `environment`; "development" is taken as sandbox.
    public init?(wire: String) {
        switch wire.lowercased() {
        case "sandbox", "development": self = .sandbox
        case "production": self = .production
        default: return nil
        }
    }

    /// Apple's host for this environment.
    public var defaultHost: String {
        switch self {
        case .sandbox: "https://api.sandbox.push.apple.com"
        case .production: "https://api.push.apple.com"
        }
    }
}
