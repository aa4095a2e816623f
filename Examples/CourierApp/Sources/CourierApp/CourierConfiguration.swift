import Foundation

/// The app's settings, read from its Info.plist (README.md lists the keys): the server and the courier's token.
struct CourierConfiguration {
    /// The EnRoute server.
    let server: URL
    /// The courier's bearer token (`enroute token --role provider`); a real app gets it by signing in.
    let accessToken: String

    /// The settings in `bundle`'s Info.plist; a missing key stops the app at launch, naming the key.
    static func from(_ bundle: Bundle) -> CourierConfiguration {
        let info = bundle.infoDictionary ?? [:]
        func string(_ key: String) -> String {
            guard let value = info[key] as? String, !value.isEmpty else {
                preconditionFailure("Info.plist has no \(key)")
            }
            return value
        }
        guard let server = URL(string: string("EnRouteServerURL")) else { preconditionFailure("EnRouteServerURL") }
        return CourierConfiguration(server: server, accessToken: string("EnRouteAccessToken"))
    }
}
