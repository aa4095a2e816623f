public import EnRouteNotifications
import Foundation
import HTTPTransport
import CurlTransport

/// `APNsTransport` over CurlTransport's `HTTP2Session`: HTTP/2 over TLS (ALPN `h2`), one multiplexed
/// connection per environment, kept open between pushes.
public final class CurlAPNsTransport: APNsTransport {
    private let sessions: [APNsEnvironment: HTTP2Session]

    /// A transport to `hosts` (Apple's by default). `caFile` trusts an extra certificate (a local stand-in).
    public init(hosts: [APNsEnvironment: String] = [:], caFile: String? = nil, requestTimeout: Duration = .seconds(30))
    {
        var sessions: [APNsEnvironment: HTTP2Session] = [:]
        for environment in APNsEnvironment.allCases {
            sessions[environment] = HTTP2Session(
                origin: hosts[environment] ?? environment.defaultHost,
                caFile: caFile, defaultTimeout: max(.seconds(1), requestTimeout))
        }
        self.sessions = sessions
    }

    public func send(_ request: APNsHTTPRequest) async throws -> APNsHTTPResponse {
        let headers = request.headers + [("content-type", "application/json"), ("accept", "")]
        let response: HTTPClientResponse
        do {
            response = try await sessions[request.environment]!.send(
                HTTP2Session.Request(method: "POST", path: request.path, headers: headers, body: Data(request.body)))
        } catch let error as HTTPClientError {
            throw APNsConnectionError(error)
        }
        return APNsHTTPResponse(status: response.status, headers: response.headers, body: Array(response.body))
    }

    public func reset(_ environment: APNsEnvironment) async { sessions[environment]?.reset() }

    /// TCP connections opened so far per environment (one while the connection holds).
    public func connectionsOpened(_ environment: APNsEnvironment) -> Int {
        sessions[environment]?.connectionsOpened ?? 0
    }
}

/// No answer came from APNs: the connection failed, broke or timed out.
public struct APNsConnectionError: Error, CustomStringConvertible {
    /// curl's account of what went wrong.
    public let description: String

    init(_ error: HTTPClientError) {
        switch error {
        case .timedOut: description = "timed out"
        case .network(let message): description = message
        case .unexpectedStatus(let status, _): description = "unexpected status \(status)"
        }
    }
}
