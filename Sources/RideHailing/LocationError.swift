/// Why no position could be found.
public enum LocationError: Error, Sendable, Equatable {
    /// No fix good enough arrived before the updates ended.
    case unavailable
}
