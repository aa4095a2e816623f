public import Foundation
public import EnRouteModels

/// An error a handler throws to answer with `application/problem+json` (RFC 9457).
public struct HTTPError: Error, Sendable {
    public var problem: Problem
    /// Extra headers, e.g. `Allow` or `Retry-After`.
    public var headers: HTTPHeaders
    /// A problem body with extension members to send instead (e.g. a 409 carrying the real trip).
    public var body: [UInt8]?

    public var status: Int { problem.status }

    public init(
        status: Int, title: String, detail: String? = nil, type: String = "about:blank",
        errors: [Problem.FieldError]? = nil, headers: HTTPHeaders = HTTPHeaders()
    ) {
        self.problem = Problem(type: type, title: title, status: status, detail: detail, errors: errors)
        self.headers = headers
    }

    /// 400 with a detail saying what to fix.
    public static func badRequest(_ detail: String) -> HTTPError {
        HTTPError(status: 400, title: "Bad Request", detail: detail)
    }

    /// 404; the same answer whether the thing is absent or not the caller's to see.
    public static func notFound(_ detail: String = "No such resource.") -> HTTPError {
        HTTPError(status: 404, title: "Not Found", detail: detail)
    }

    /// 401 with a `WWW-Authenticate` challenge.
    public static func unauthorized(_ detail: String) -> HTTPError {
        var h = HTTPHeaders(); h.add("WWW-Authenticate", "Bearer")
        return HTTPError(status: 401, title: "Unauthorized", detail: detail, headers: h)
    }

    /// 403: the caller is known but this action is not theirs.
    public static func forbidden(_ detail: String) -> HTTPError {
        HTTPError(status: 403, title: "Forbidden", detail: detail)
    }

    /// 422 naming one invalid field by JSON Pointer.
    public static func invalid(_ pointer: String, _ detail: String) -> HTTPError {
        HTTPError(
            status: 422, title: "Unprocessable Content", detail: "\(pointer): \(detail)",
            errors: [Problem.FieldError(pointer: pointer, detail: detail)])
    }

    /// 413 for a body over the route's limit.
    public static func payloadTooLarge(limit: Int) -> HTTPError {
        HTTPError(
            status: 413, title: "Content Too Large",
            detail: "The body is over the \(limit)-byte limit for this endpoint.")
    }

    /// 503 with `Retry-After`.
    public static func unavailable(retryAfterSeconds: Int, detail: String) -> HTTPError {
        var h = HTTPHeaders(); h.add("Retry-After", String(retryAfterSeconds))
        return HTTPError(status: 503, title: "Service Unavailable", detail: detail, headers: h)
    }

    /// The answer for a request the engine could not read, by the status its parser chose.
    static func protocolError(status: Int) -> HTTPError {
        let (title, detail): (String, String) =
            switch status {
            case 400:
                (
                    "Bad Request",
                    "The request is malformed: check its request line, headers, Content-Length and chunked framing."
                )
            case 413: ("Content Too Large", "The request's declared body is too large.")
            case 414: ("URI Too Long", "The request line is longer than this server accepts.")
            case 431: ("Request Header Fields Too Large", "The request's headers are larger than this server accepts.")
            case 501:
                (
                    "Not Implemented",
                    "The request's Transfer-Encoding is not supported; send the body with Content-Length or chunked."
                )
            case 505: ("HTTP Version Not Supported", "Use HTTP/1.1.")
            default: ("Internal Server Error", "Something went wrong on our side.")
            }
        return HTTPError(status: status, title: title, detail: detail)
    }

    /// 500 that says nothing about the inside.
    public static let internalError = HTTPError(
        status: 500, title: "Internal Server Error", detail: "Something went wrong on our side.")

    /// Maps a decoding failure to 400 (not JSON) or 422 (JSON of the wrong shape), naming the field.
    public init(decoding error: DecodingError) {
        func pointer(_ path: [any CodingKey], _ extra: (any CodingKey)? = nil) -> String {
            let keys = path + (extra.map { [$0] } ?? [])
            return "/" + keys.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: "/")
        }
        switch error {
        case .keyNotFound(let key, let ctx):
            self = .invalid(pointer(ctx.codingPath, key), "is required")
        case .typeMismatch(let type, let ctx):
            self = .invalid(pointer(ctx.codingPath), "must be \(Self.jsonTypeName(type))")
        case .valueNotFound(let type, let ctx):
            self = .invalid(pointer(ctx.codingPath), "must be \(Self.jsonTypeName(type)), not null")
        case .dataCorrupted(let ctx):
            if ctx.codingPath.isEmpty {
                self = .badRequest("The body is not valid JSON.")
            } else {
                self = .invalid(pointer(ctx.codingPath), ctx.debugDescription)
            }
        @unknown default:
            self = .badRequest("The body could not be read.")
        }
    }

    private static func jsonTypeName(_ type: Any.Type) -> String {
        switch type {
        case is String.Type, is Date.Type: "a string"
        case is Int.Type, is Int64.Type, is Double.Type: "a number"
        case is Bool.Type: "a boolean"
        case is [Any].Type: "an array"
        default: "an object"
        }
    }

    /// The answer this error stands for.
    public var response: HTTPResponse {
        var h = headers
        h.set("Cache-Control", "no-store")
        if let body {
            // A custom body is still a problem document (with extension members) unless it says otherwise.
            h.set("Content-Type", headers["Content-Type"] ?? "application/problem+json")
            return HTTPResponse(status: status, headers: h, body: .bytes(body))
        }
        h.set("Content-Type", "application/problem+json")
        let bytes = (try? WireCoding.encoder().encode(problem)).map(Array.init) ?? Array(#"{"title":"Error"}"#.utf8)
        return HTTPResponse(status: status, headers: h, body: .bytes(bytes))
    }
}

/// An error that names the HTTP problem it is answered with when a handler lets it through.
public protocol HTTPErrorConvertible: Error {
    /// The problem to answer with.
    var httpError: HTTPError { get }
}
