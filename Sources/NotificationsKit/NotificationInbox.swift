/// Domain: the root view model's promise.
public protocol NotificationInbox: Sendable {
    /// Replays waiting taps on subscribe, then new ones.
    /// One stream per caller. Finishes when the caller's task is cancelled.
    func taps() -> AsyncStream<NotificationTap>
}
