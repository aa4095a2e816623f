/// An error reply from the server (`-ERR …`, `-WRONGTYPE …`): the command reached Redis and Redis refused it.
public struct RedisServerError: Error, Equatable, CustomStringConvertible {
    /// The whole error line after the `-`.
    public let message: String

    /// An error for the reply line `message`.
    public init(message: String) { self.message = message }

    /// The error's kind: its first word (`ERR`, `WRONGTYPE`, `NOSCRIPT`, …).
    public var code: String { String(message.prefix { $0 != " " }) }

    public var description: String { "Redis refused the command: \(message)" }
}
