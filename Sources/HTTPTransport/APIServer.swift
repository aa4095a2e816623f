public import Foundation
public import EnRouteModels

/// Supplies the bearer token for requests; nil when signed out.
public protocol AccessTokenProviding: Sendable {
    /// The current access token, if any.
    func accessToken() async -> String?
}

/// A fixed token, for tools and tests.
public struct StaticAccessToken: AccessTokenProviding {
    private let token: String?
    public init(_ token: String?) { self.token = token }
    public func accessToken() async -> String? { token }
}

/// An API call that did not succeed, as the client kit reports it.
public enum APIError: Error, Sendable, Equatable {
    /// The server answered with a problem document (RFC 9457).
    case problem(Problem)
    /// The server answered with a non-success status and no readable problem.
    case status(Int)
    /// The answer's body could not be read as the expected type.
    case undecodable(String)
    /// 429 or 503 with `Retry-After`: try again no sooner than this.
    case retryAfter(Duration, status: Int)

    /// The HTTP status behind the error, when there is one.
    public var status: Int? {
        switch self {
        case .problem(let p): p.status
        case .status(let s): s
        case .retryAfter(_, let s): s
        case .undecodable: nil
        }
    }
}

/// The EnRoute API as the client kit addresses it: base URL, credentials, JSON in and out.
public struct APIServer: Sendable {
    public let baseURL: URL
    public let credentials: any AccessTokenProviding

    public init(baseURL: URL, credentials: any AccessTokenProviding) {
        self.baseURL = baseURL
        self.credentials = credentials
    }

    /// Builds a request for `path` (which may carry a query), with the bearer token and an optional JSON body.
    public func request(
        _ method: String, _ path: String, body: Data? = nil, headers: [String: String] = [:],
        timeout: Duration? = nil
    ) async -> HTTPClientRequest {
        var all = headers
        all["Accept"] = all["Accept"] ?? "application/json"
        if body != nil { all["Content-Type"] = "application/json" }
        if let token = await credentials.accessToken() { all["Authorization"] = "Bearer \(token)" }
        let url = URL(string: path, relativeTo: baseURL)?.absoluteURL ?? baseURL.appendingPathComponent(path)
        return HTTPClientRequest(method: method, url: url, headers: all, body: body, timeout: timeout)
    }

    /// Builds a request whose body is `value` encoded with the wire coder.
    public func request(
        _ method: String, _ path: String, json value: some Encodable, headers: [String: String] = [:],
        timeout: Duration? = nil
    ) async throws -> HTTPClientRequest {
        try await request(method, path, body: WireCoding.encoder().encode(value), headers: headers, timeout: timeout)
    }
}

extension HTTPClientResponse {
    /// Throws `APIError` unless the status is 2xx.
    public func requireSuccess() throws {
        guard (200..<300).contains(status) else { throw apiError() }
    }

    /// Decodes a 2xx body as `T`, or throws `APIError`.
    public func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try requireSuccess()
        do {
            return try WireCoding.decoder().decode(T.self, from: body)
        } catch {
            throw APIError.undecodable(String(describing: error))
        }
    }

    /// The `APIError` this (non-2xx) answer stands for.
    public func apiError() -> APIError {
        if status == 429 || status == 503,
            let retry = header("Retry-After").flatMap({ Int($0.trimmingCharacters(in: .whitespaces)) }), retry >= 0
        {
            return .retryAfter(.seconds(retry), status: status)
        }
        if let problem = try? WireCoding.decoder().decode(Problem.self, from: body) { return .problem(problem) }
        return .status(status)
    }
}
