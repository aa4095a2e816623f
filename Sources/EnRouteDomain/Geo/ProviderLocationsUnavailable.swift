/// The provider locations could not be read or written (their shared store, Redis, is unreachable or refused): nothing
/// about presence changed for certain, and the same request may succeed shortly. The API answers 503 with
/// `Retry-After`.
public struct ProviderLocationsUnavailable: Error, Sendable, Equatable, CustomStringConvertible {
    /// What failed, in the store's words.
    public let reason: String
    public init(_ reason: String) { self.reason = reason }
    public var description: String { "provider locations unavailable: \(reason)" }
}
