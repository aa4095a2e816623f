public import Foundation

/// The wall-clock time, injected wherever logic needs "now".
public protocol DateProvider: Sendable {
    /// The current time.
    func now() -> Date
}

/// The system's wall clock; only the composition root constructs it.
public struct SystemDateProvider: DateProvider {
    public init() {}
    public func now() -> Date { Date() }
}
