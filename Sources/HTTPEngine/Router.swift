/// A request handler: synchronous ones run on the engine's thread and must not block.
public enum Handler: Sendable {
    /// Answers at once from memory, without a hop to a Swift task (hot read paths).
    case sync(@Sendable (HTTPRequest) throws -> HTTPResponse)
    /// May suspend; runs in its own task while the connection waits.
    case async(@Sendable (HTTPRequest) async throws -> HTTPResponse)
}

/// One registered route.
public struct Route: Sendable {
    public let method: String
    public let pattern: String
    public let handler: Handler
    /// Largest body accepted, in bytes; larger ones get 413.
    public let bodyLimit: Int
}

/// Methods and path patterns (`/v1/trips/{id}`) mapped to handlers; 404 and 405 with `Allow` otherwise.
public struct Router: Sendable {
    /// What a method and path resolve to.
    public enum Resolution: Sendable {
        case route(Route, parameters: [String: String])
        case notFound
        case methodNotAllowed(allow: [String])
    }

    /// One point of the path tree; children are indices into `nodes`, so a walk takes no references.
    private struct Node: Sendable {
        var literals: [String: Int] = [:]
        var parameter: (name: String, node: Int)?
        var routes: [String: Route] = [:]
    }

    /// The path tree, its root first (a value: a copy of a router that gets a route shares nothing with the original).
    private var nodes = [Node()]
    /// Routes without parameters by their path and method: found with one hash, without splitting the path.
    private var exact: [String: [String: Route]] = [:]
    /// The body limit for routes that don't set one: 64 KiB.
    public static let defaultBodyLimit = 64 * 1024

    public init() {}

    /// Registers a handler; `{name}` segments capture path parameters.
    public mutating func add(
        _ method: String, _ pattern: String, bodyLimit: Int = Router.defaultBodyLimit, _ handler: Handler
    ) {
        guard let segments = Self.segments(pattern) else { preconditionFailure("malformed route pattern \(pattern)") }
        var node = 0
        for segment in segments {
            if segment.hasPrefix("{"), segment.hasSuffix("}") {
                let name = String(segment.dropFirst().dropLast())
                if let existing = nodes[node].parameter {
                    precondition(existing.name == name, "conflicting parameter names at \(pattern)")
                    node = existing.node
                } else {
                    nodes.append(Node())
                    nodes[node].parameter = (name, nodes.count - 1)
                    node = nodes.count - 1
                }
            } else if let next = nodes[node].literals[segment] {
                node = next
            } else {
                nodes.append(Node())
                nodes[node].literals[segment] = nodes.count - 1
                node = nodes.count - 1
            }
        }
        precondition(nodes[node].routes[method] == nil, "duplicate route \(method) \(pattern)")
        let route = Route(method: method, pattern: pattern, handler: handler, bodyLimit: bodyLimit)
        nodes[node].routes[method] = route
        if !segments.contains(where: { $0.hasPrefix("{") }) { exact[pattern, default: [:]][method] = route }
    }

    /// Registers an async GET handler.
    public mutating func get(
        _ pattern: String, _ handler: @escaping @Sendable (HTTPRequest) async throws -> HTTPResponse
    ) {
        add("GET", pattern, .async(handler))
    }

    /// Registers an async POST handler.
    public mutating func post(
        _ pattern: String, bodyLimit: Int = Router.defaultBodyLimit,
        _ handler: @escaping @Sendable (HTTPRequest) async throws -> HTTPResponse
    ) {
        add("POST", pattern, bodyLimit: bodyLimit, .async(handler))
    }

    /// Registers an async PUT handler.
    public mutating func put(
        _ pattern: String, bodyLimit: Int = Router.defaultBodyLimit,
        _ handler: @escaping @Sendable (HTTPRequest) async throws -> HTTPResponse
    ) {
        add("PUT", pattern, bodyLimit: bodyLimit, .async(handler))
    }

    /// Registers an async DELETE handler.
    public mutating func delete(
        _ pattern: String, _ handler: @escaping @Sendable (HTTPRequest) async throws -> HTTPResponse
    ) {
        add("DELETE", pattern, .async(handler))
    }

    /// Finds the route for a method and path, matched exactly: no empty segments (`//`, a trailing
    /// slash) and no control characters.
    public func resolve(method: String, path: String) -> Resolution {
        // A path with only literal segments that names a route resolves to the same node the walk below reaches.
        if let routes = exact[path], let route = routes[method] ?? (method == "HEAD" ? routes["GET"] : nil) {
            return .route(route, parameters: [:])
        }
        // No array of segments: each is looked up as the walk cuts it.
        var node = 0
        var parameters: [String: String] = [:]
        let walked = Self.forEachSegment(of: path) { segment in
            if let next = nodes[node].literals[segment] {
                node = next
            } else if let parameter = nodes[node].parameter {
                parameters[parameter.name] = segment
                node = parameter.node
            } else {
                return false
            }
            return true
        }
        guard walked else { return .notFound }
        let routes = nodes[node].routes
        if let route = routes[method] { return .route(route, parameters: parameters) }
        if method == "HEAD", let route = routes["GET"] { return .route(route, parameters: parameters) }
        if routes.isEmpty { return .notFound }
        return .methodNotAllowed(allow: routes.keys.sorted())
    }

    /// Runs the whole request through routing and its handler, always producing an answer.
    public func respond(to request: HTTPRequest) async -> HTTPResponse {
        switch resolve(method: request.method, path: request.path) {
        case .notFound:
            return HTTPError.notFound().response
        case .methodNotAllowed(let allow):
            return Self.methodNotAllowed(allow).response
        case .route(let route, let parameters):
            var request = request
            request.pathParameters = parameters
            request.routePattern = route.pattern
            if request.body.count > route.bodyLimit {
                return HTTPError.payloadTooLarge(limit: route.bodyLimit).response
            }
            switch route.handler {
            case .sync(let handle): return Self.run { try handle(request) }
            case .async(let handle):
                do { return try await handle(request) } catch { return Self.answer(for: error) }
            }
        }
    }

    /// 405 with the `Allow` header.
    public static func methodNotAllowed(_ allow: [String]) -> HTTPError {
        var headers = HTTPHeaders()
        headers.add("Allow", allow.joined(separator: ", "))
        return HTTPError(
            status: 405, title: "Method Not Allowed", detail: "Use \(allow.joined(separator: " or ")).",
            headers: headers)
    }

    /// Runs a synchronous handler, turning thrown errors into problem answers.
    static func run(_ body: () throws -> HTTPResponse) -> HTTPResponse {
        do { return try body() } catch { return answer(for: error) }
    }

    /// The answer for an error a handler threw: its problem (an `HTTPError`, or one an `HTTPErrorConvertible` names),
    /// or a bare 500.
    static func answer(for error: any Error) -> HTTPResponse {
        if let http = error as? HTTPError { return http.response }
        if let convertible = error as? any HTTPErrorConvertible { return convertible.httpError.response }
        if error is CancellationError {
            return HTTPError.unavailable(retryAfterSeconds: 1, detail: "The request was cancelled.").response
        }
        return HTTPError.internalError.response
    }

    /// The segments of `/a/b`; nil for a path that is not exactly that shape.
    static func segments(_ path: String) -> [String]? {
        var segments: [String] = []
        return forEachSegment(of: path) {
            segments.append($0); return true
        } ? segments : nil
    }

    /// Hands each segment of `/a/b` to `visit` in one pass, cutting at the slashes (a segment of up to 15 bytes is a
    /// String without an allocation of its own). False for a path that is not exactly that shape (no leading slash, an
    /// empty segment, a control character), or as soon as `visit` says false.
    private static func forEachSegment(of path: String, _ visit: (String) -> Bool) -> Bool {
        let bytes = path.utf8
        guard bytes.first == UInt8(ascii: "/") else { return false }
        if bytes.count == 1 { return true }
        var start = bytes.index(after: bytes.startIndex), i = start
        while true {
            if i == bytes.endIndex || bytes[i] == UInt8(ascii: "/") {
                guard i > start, visit(String(Substring(bytes[start..<i]))) else { return false }
                if i == bytes.endIndex { return true }
                start = bytes.index(after: i)
                i = start
                continue
            }
            if bytes[i] < 0x20 || bytes[i] == 0x7F { return false }
            i = bytes.index(after: i)
        }
    }
}
