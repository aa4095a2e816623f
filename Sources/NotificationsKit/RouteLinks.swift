public import Foundation

/// The links this app answers to: its own URL scheme (`enroute://orders/8F3K`) and the hosts of its universal
/// links (`https://enroute.example/orders/8F3K`).
public struct RouteLinks: Sendable, Equatable {
    /// The app's custom scheme, without "://".
    public let scheme: String
    /// The hosts whose https links open in the app.
    public let hosts: Set<String>

    /// Links over `scheme` and the universal-link `hosts` (compared without case).
    public init(scheme: String, hosts: Set<String>) {
        self.scheme = scheme.lowercased()
        self.hosts = Set(hosts.map { $0.lowercased() })
    }
}

extension Route {
    /// Parses a link the app was opened with; nil for another scheme, another host, credentials, a port, or a
    /// path this app version cannot read. `scheme://orders/8F3K` reads its host as the path's first part.
    public init?(url: URL, links: RouteLinks) {
        guard let parts = URLComponents(url: url, resolvingAgainstBaseURL: false),
            let scheme = parts.scheme?.lowercased(), parts.user == nil, parts.password == nil, parts.port == nil
        else { return nil }
        let path: String
        if scheme == links.scheme {
            path = (parts.host ?? "") + parts.path
        } else if scheme == "https", let host = parts.host?.lowercased(), links.hosts.contains(host) {
            path = parts.path
        } else {
            return nil
        }
        self.init(path: path.trimmingCharacters(in: CharacterSet(charactersIn: "/")))
    }
}
