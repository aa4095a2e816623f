/// Where a Redis server is and how long to wait for it: parsed from `redis://host[:port][/db]`.
public struct RedisConfiguration: Sendable, Equatable {
    /// The host name or address (an IPv6 address without its brackets).
    public var host: String
    /// The TCP port (6379 when the URL names none).
    public var port: Int
    /// The logical database selected on every new connection.
    public var database: Int
    /// The name every new connection gives itself (`CLIENT SETNAME`), so `CLIENT LIST` tells nodes and readers apart.
    public var clientName: String?
    /// How long a connection may take to open.
    public var connectTimeout: Duration
    /// How long a command (or a pipeline) may wait for its whole reply, beyond any time it asks the server to block.
    public var commandTimeout: Duration

    /// A configuration for `host:port`.
    public init(
        host: String, port: Int = 6379, database: Int = 0, connectTimeout: Duration = .seconds(5),
        commandTimeout: Duration = .seconds(5)
    ) {
        self.host = host
        self.port = port
        self.database = database
        self.connectTimeout = connectTimeout
        self.commandTimeout = commandTimeout
    }

    /// Parses `redis://host[:port][/db]`; throws `RedisClientError.malformedURL` naming what is wrong.
    public init(
        url: String, connectTimeout: Duration = .seconds(5), commandTimeout: Duration = .seconds(5)
    ) throws(RedisClientError) {
        func malformed(_ reason: String) -> RedisClientError { .malformedURL(url, reason: reason) }
        let scheme = "redis://"
        guard url.lowercased().hasPrefix(scheme) else {
            throw malformed(
                url.contains("://")
                    ? "the scheme is not redis:// (rediss:// and unix sockets are not supported)" : "no redis:// scheme"
            )
        }
        var rest = Substring(url.dropFirst(scheme.count))
        guard !rest.contains("?"), !rest.contains("#") else {
            throw malformed("query strings and fragments are not supported")
        }
        guard !rest.contains("@") else { throw malformed("credentials are not supported") }
        var databasePart: Substring?
        if let slash = rest.firstIndex(of: "/") {
            databasePart = rest[rest.index(after: slash)...]
            rest = rest[..<slash]
        }
        let host: Substring
        var portPart: Substring?
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { throw malformed("an IPv6 address without its closing ]") }
            host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw malformed("'\(after)' after the IPv6 address") }
                portPart = after.dropFirst()
            }
        } else if let colon = rest.firstIndex(of: ":") {
            host = rest[..<colon]
            portPart = rest[rest.index(after: colon)...]
        } else {
            host = rest
        }
        guard !host.isEmpty else { throw malformed("no host") }
        var port = 6379
        if let portPart {
            guard let value = Int(portPart), (1...65_535).contains(value), portPart.allSatisfy(\.isASCII) else {
                throw malformed("the port '\(portPart)' is not a number from 1 to 65535")
            }
            port = value
        }
        var database = 0
        if let databasePart, !databasePart.isEmpty {
            guard let value = Int(databasePart), value >= 0, databasePart.allSatisfy(\.isNumber) else {
                throw malformed("the database '\(databasePart)' is not a number")
            }
            database = value
        }
        self.init(
            host: String(host), port: port, database: database, connectTimeout: connectTimeout,
            commandTimeout: commandTimeout)
    }

    /// The URL this configuration was read from (in its canonical form).
    public var url: String {
        let shownHost = host.contains(":") ? "[\(host)]" : host
        return "redis://\(shownHost):\(port)" + (database == 0 ? "" : "/\(database)")
    }
}
