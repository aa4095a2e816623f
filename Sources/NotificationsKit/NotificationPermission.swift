/// Domain: the ask use case's promise.
public protocol NotificationPermission: Sendable {
    /// Never throws. A failed request reads as the current status.
    func current() async -> PushPermission
    /// Asks the system; provisional never shows a prompt.
    func request(provisional: Bool) async -> PushPermission
}
