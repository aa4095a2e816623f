public import Foundation
public import EnRouteModels

/// An HTTP header list with case-insensitive lookup; order and repeats are kept.
public struct HTTPHeaders: Sendable, Sequence {
    private var fields: [(name: String, value: String)] = []

    public init(_ fields: [(String, String)] = []) { self.fields = fields.map { (name: $0.0, value: $0.1) } }

    /// The first value for `name`, compared case-insensitively.
    public subscript(_ name: String) -> String? {
        fields.first { Self.sameName($0.name, name) }?.value
    }

    /// ASCII case-insensitive equality: header names are ASCII, and Foundation's comparison is slow on the hot path.
    static func sameName(_ a: String, _ b: String) -> Bool {
        var a = a, b = b
        return a.withUTF8 { x in
            b.withUTF8 { y in
                guard x.count == y.count else { return false }
                for i in 0..<x.count where x[i] != y[i] {
                    let l = x[i] | 0x20
                    guard l == y[i] | 0x20, l >= 0x61, l <= 0x7A else { return false }
                }
                return true
            }
        }
    }

    /// Appends a field.
    public mutating func add(_ name: String, _ value: String) { fields.append((name, value)) }

    /// Replaces every field called `name` with one.
    public mutating func set(_ name: String, _ value: String) {
        fields.removeAll { Self.sameName($0.name, name) }
        fields.append((name, value))
    }

    public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> { fields.makeIterator() }
}

/// One request as a handler sees it: the body is complete and within the route's limit.
public struct HTTPRequest: Sendable {
    public var method: String
    /// The decoded path, without the query.
    public var path: String
    public var query: [String: String]
    public var headers: HTTPHeaders
    public var body: [UInt8]
    /// Values captured by `{name}` segments of the route.
    public var pathParameters: [String: String] = [:]
    /// The route pattern that matched, e.g. `/v1/trips/{id}` (used as the metrics label).
    public var routePattern: String = ""

    public init(
        method: String, path: String, query: [String: String] = [:], headers: HTTPHeaders = HTTPHeaders(),
        body: [UInt8] = []
    ) {
        self.method = method; self.path = path; self.query = query; self.headers = headers; self.body = body
    }

    /// A path parameter, or a 404 when the route has none by that name.
    public func parameter(_ name: String) throws(HTTPError) -> String {
        guard let value = pathParameters[name], !value.isEmpty else { throw HTTPError.notFound() }
        return value
    }

    /// True when the client asks to upgrade to a WebSocket (a GET; RFC 6455 §4.1).
    public var isWebSocketUpgrade: Bool {
        method == "GET" && headers["Upgrade"]?.lowercased() == "websocket"
    }

    /// Decodes the JSON body as `T`: 400 for malformed JSON, 415 for another media type, 422 naming a bad field, or
    /// naming a string that holds U+0000 (`TextPolicy`).
    public func decode<T: Decodable>(_ type: T.Type) throws(HTTPError) -> T {
        if let contentType = headers["Content-Type"]?.lowercased(), !contentType.hasPrefix("application/json"),
            !contentType.contains("+json")
        {
            throw HTTPError(status: 415, title: "Unsupported Media Type", detail: "Send the body as application/json.")
        }
        guard !body.isEmpty else { throw HTTPError.badRequest("The request needs a JSON body.") }
        if let pointer = TextPolicy.nulPointer(inJSON: body) { throw TextPolicy.refusal(pointer) }
        do {
            return try WireCoding.decoder().decode(T.self, from: Data(body))
        } catch let error as DecodingError {
            throw HTTPError(decoding: error)
        } catch {
            throw HTTPError.badRequest("The body is not valid JSON.")
        }
    }
}
