/// Turns a tap into a route that is safe to show, and counts it once.
///
/// The rule: a tap opens what it's about, after sign-in; it never opens another account's order;
/// anything unreadable opens Home.
@MainActor
public protocol OpenNotificationUseCase {
    /// Never throws: the worst case is .home.
    /// The open is reported even if the caller stops waiting.
    func route(for tap: NotificationTap) async -> Route
}
