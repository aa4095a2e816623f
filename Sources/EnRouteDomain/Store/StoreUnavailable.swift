/// The database could not be reached (its connection broke or its server is down): nothing was written, and the
/// same request may succeed once a new connection opens. The API answers 503 with `Retry-After`.
public struct StoreUnavailable: Error, Sendable, Equatable, CustomStringConvertible {
    /// What failed, in the database's words.
    public let reason: String
    public init(_ reason: String) { self.reason = reason }
    public var description: String { "storage unavailable: \(reason)" }
}
