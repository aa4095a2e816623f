/// How long to wait before the next attempt, by reason and attempt number (1-based).
public struct PushRetryPolicy: Sendable {
    /// Attempts after which a message is given up.
    public var maximumAttempts: Int

    public init(maximumAttempts: Int = 12) { self.maximumAttempts = maximumAttempts }

    /// The delay before attempt `attempt + 1`: doubling from a base per reason, up to a cap.
    public func delay(after attempt: Int, reason: RetryReason) -> Duration {
        let (base, cap): (Int, Int) =
            switch reason {
            case .network: (5, 300)
            case .throttled: (30, 600)
            // APNs asks for 5xx retries no sooner than 15 minutes apart once they repeat.
            case .serverError: (60, 900)
            case .configuration: (300, 3600)
            }
        let factor = 1 << min(max(attempt - 1, 0), 16)
        return .seconds(min(base * factor, cap))
    }
}
