/// Why a push should be tried again later; each has its own backoff.
public enum RetryReason: String, Sendable, Equatable {
    /// No connection, a broken one, or an idle timeout.
    case network
    /// 429: too many pushes to this device, or too many token updates.
    case throttled
    /// 5xx from APNs.
    case serverError
    /// Credentials or topic are wrong; a fixed configuration will let it through.
    case configuration
}

/// What happened to one push, as the sender needs to know it.
public enum PushOutcome: Sendable, Equatable {
    case delivered
    /// The token is dead (410, or a BadDeviceToken on the right host): delete it, unless it was
    /// registered again after `since` (nil: now).
    case tokenInvalid(since: Double?)
    /// APNs refused this push for good (payload, topic of another app, forbidden): drop it.
    case rejected(reason: String)
    /// Try again after a backoff.
    case retry(RetryReason, reason: String)
}
