/// One RESP2 reply: what a Redis server answers to a command.
public enum RESPValue: Sendable, Equatable {
    /// A status line (`+OK`).
    case simple(String)
    /// An error line (`-ERR …`), kept as a value inside pipelines and arrays; a single command throws
    /// `RedisServerError`.
    case error(String)
    /// An integer (`:1`).
    case integer(Int)
    /// A binary-safe bulk string (`$3\r\nabc`).
    case bulk([UInt8])
    /// An array of replies (`*2…`), possibly nested.
    case array([RESPValue])
    /// The null bulk string (`$-1`) or null array (`*-1`).
    case null

    /// The bytes of a bulk string or the text of a status line; nil otherwise.
    public var bytes: [UInt8]? {
        switch self {
        case .bulk(let bytes): bytes
        case .simple(let text): Array(text.utf8)
        default: nil
        }
    }

    /// `bytes` as UTF-8 text.
    public var string: String? { bytes.map { String(decoding: $0, as: UTF8.self) } }
}
