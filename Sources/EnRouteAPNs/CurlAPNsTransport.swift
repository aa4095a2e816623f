public import EnRouteNotifications
public import Foundation

/// `APNsTransport` over libcurl (built with nghttp2): HTTP/2 over TLS, one multiplexed connection
/// per environment, kept open between pushes.
public final class CurlAPNsTransport: APNsTransport {
    private let connections: [APNsEnvironment: APNsCurlConnection]

    /// A transport to `hosts` (Apple's by default). `caFile` trusts an extra certificate (a local stand-in).
    public init(hosts: [APNsEnvironment: String] = [:], caFile: String? = nil, requestTimeout: Duration = .seconds(30)) {
        var connections: [APNsEnvironment: APNsCurlConnection] = [:]
        for environment in APNsEnvironment.allCases {
            connections[environment] = APNsCurlConnection(baseURL: hosts[environment] ?? environment.defaultHost, caFile: caFile,
                                                          timeout: requestTimeout)
        }
        self.connections = connections
    }

    deinit { connections.values.forEach { $0.shutdown() } }

    public func send(_ request: APNsHTTPRequest) async throws -> APNsHTTPResponse {
        try await connections[request.environment]!.send(request)
    }

    public func reset(_ environment: APNsEnvironment) async { connections[environment]?.reset() }

    /// TCP connections opened so far per environment (one while the connection holds).
    public func connectionsOpened(_ environment: APNsEnvironment) -> Int { connections[environment]?.connectionsOpened ?? 0 }
}
