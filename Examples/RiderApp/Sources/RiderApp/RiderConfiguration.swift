import EnRouteModels
import Foundation
import NotificationsKit

/// The app's settings, read from its Info.plist (README.md lists the keys): the server and the signed-in demo
/// account, the keychain group shared with the notification service extension, the links the app answers, and the
/// ride's destination.
struct RiderConfiguration {
    /// The EnRoute server.
    let server: URL
    /// The rider's bearer token (`enroute token --role customer`); a real app gets it by signing in.
    let accessToken: String
    /// The account the token belongs to.
    let account: AccountID
    /// "sandbox" for development builds, "production" for TestFlight and the App Store.
    let apnsEnvironment: String
    /// The app's version, as the device registration reports it.
    let appVersion: String
    /// The keychain group the app and its service extension share.
    let keychainGroup: KeychainAccessGroup
    /// The app's URL scheme and universal-link hosts.
    let links: RouteLinks
    /// Where the demo ride goes (a real app asks the rider).
    let dropoff: Coordinate

    /// The settings in `bundle`'s Info.plist; a missing key stops the app at launch, naming the key.
    static func from(_ bundle: Bundle) -> RiderConfiguration {
        let info = bundle.infoDictionary ?? [:]
        func string(_ key: String) -> String {
            guard let value = info[key] as? String, !value.isEmpty else {
                preconditionFailure("Info.plist has no \(key)")
            }
            return value
        }
        func number(_ key: String) -> Double {
            guard let value = info[key] as? Double else { preconditionFailure("Info.plist has no number \(key)") }
            return value
        }
        guard let server = URL(string: string("EnRouteServerURL")) else { preconditionFailure("EnRouteServerURL") }
        let keychainGroup: KeychainAccessGroup
        do { keychainGroup = try KeychainAccessGroup(infoDictionary: info) } catch { preconditionFailure("\(error)") }
        let hosts = info["EnRouteUniversalLinkHosts"] as? [String] ?? []
        return RiderConfiguration(
            server: server, accessToken: string("EnRouteAccessToken"), account: AccountID(string("EnRouteAccount")),
            apnsEnvironment: string("EnRouteAPNsEnvironment"), appVersion: string("CFBundleShortVersionString"),
            keychainGroup: keychainGroup, links: RouteLinks(scheme: string("EnRouteURLScheme"), hosts: Set(hosts)),
            dropoff: Coordinate(lat: number("EnRouteDemoDropoffLatitude"), lng: number("EnRouteDemoDropoffLongitude")))
    }
}
