/// Why a command did not get a reply: the URL, the connection or the bytes on it, never the server's refusal.
public enum RedisClientError: Error, Equatable, CustomStringConvertible {
    /// The URL is not `redis://host[:port][/db]`.
    case malformedURL(String, reason: String)
    /// The host name did not resolve.
    case unresolvableHost(String, reason: String)
    /// Nothing listens at the address, or the connection could not be made (`reason` is the system's word).
    case connectionFailed(host: String, port: Int, reason: String)
    /// No connection, or no complete reply, within the configured time; the connection is dropped.
    case timedOut(host: String, port: Int, after: Duration)
    /// The server (or something between) closed or reset the connection before the reply was complete.
    case connectionClosed(host: String, port: Int)
    /// The server sent bytes that are not RESP2.
    case protocolViolation(String)
    /// The reply is RESP but not the shape the command answers (`expected` says what was wanted).
    case unexpectedReply(command: String, expected: String, got: RESPValue)

    public var description: String {
        switch self {
        case .malformedURL(let url, let reason):
            "malformed Redis URL '\(url)': \(reason) (expected redis://host[:port][/db])"
        case .unresolvableHost(let host, let reason): "cannot resolve Redis host '\(host)': \(reason)"
        case .connectionFailed(let host, let port, let reason): "cannot connect to Redis at \(host):\(port): \(reason)"
        case .timedOut(let host, let port, let after): "Redis at \(host):\(port) did not answer within \(after)"
        case .connectionClosed(let host, let port):
            "the connection to Redis at \(host):\(port) was closed before the reply"
        case .protocolViolation(let why): "Redis sent a malformed reply: \(why)"
        case .unexpectedReply(let command, let expected, let got):
            "Redis answered \(command) with \(got), not \(expected)"
        }
    }
}
