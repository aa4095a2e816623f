/// The configuration and effects given to `Backend` do not fit together (said in `reason`).
public struct BackendSetupError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What does not fit.
    public let reason: String
    public init(_ reason: String) { self.reason = reason }
    public var description: String { "backend setup: \(reason)" }
}
