public import EnRouteNotifications
/// One HTTP/2 request to APNs, as the transport sends it.
public struct APNsHTTPRequest: Sendable, Equatable {
    public var environment: APNsEnvironment
    /// `/3/device/<token>`.
    public var path: String
    /// Header fields in order (`authorization`, `apns-*`).
    public var headers: [(String, String)]
    public var body: [UInt8]

    public init(environment: APNsEnvironment, path: String, headers: [(String, String)], body: [UInt8]) {
        self.environment = environment; self.path = path; self.headers = headers; self.body = body
    }

    public static func == (a: Self, b: Self) -> Bool {
        a.environment == b.environment && a.path == b.path && a.body == b.body
            && a.headers.map { "\($0.0):\($0.1)" } == b.headers.map { "\($0.0):\($0.1)" }
    }
}

/// APNs' answer: status, headers (names lower-cased) and the JSON body with `reason` on errors.
public struct APNsHTTPResponse: Sendable, Equatable {
    public var status: Int
    public var headers: [String: String]
    public var body: [UInt8]

    public init(status: Int, headers: [String: String] = [:], body: [UInt8] = []) {
        self.status = status; self.headers = headers; self.body = body
    }
}

/// HTTP/2 to APNs: one long-lived, multiplexed connection per environment.
public protocol APNsTransport: Sendable {
    /// Sends one request on the environment's connection; throws only when no answer came.
    func send(_ request: APNsHTTPRequest) async throws -> APNsHTTPResponse
    /// Drops the environment's connection; the next request opens a new one.
    func reset(_ environment: APNsEnvironment) async
}
