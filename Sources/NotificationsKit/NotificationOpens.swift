/// Domain: the open use case's promise.
public protocol NotificationOpens: Sendable {
    /// Reports once per ID. Not cancelled by the caller: it lands
    /// or is dropped after a few retries. Never throws.
    func markOpened(_ tap: NotificationTap) async
}
