public import ClientKit

/// Why no position could be found.
public enum LocationError: Error, Sendable, Equatable {
    /// No fix good enough arrived before the updates ended, or updates kept coming without a position.
    case unavailable
    /// The user (or a device policy) denied this app location; the app asks them to allow it in Settings.
    case denied
}

extension LocationError {
    /// The error a decision that ends the wait stands for; nil for `.use` and `.wait`.
    public init?(_ decision: LocationDecision) {
        switch decision {
        case .denied: self = .denied
        case .unavailable: self = .unavailable
        case .use, .wait: return nil
        }
    }
}
