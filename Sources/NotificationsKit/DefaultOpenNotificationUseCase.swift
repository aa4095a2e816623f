/// `OpenNotificationUseCase` over `NotificationOpens` and the session.
@MainActor
public final class DefaultOpenNotificationUseCase: OpenNotificationUseCase {
    private let opens: any NotificationOpens
    private let session: any Session

    public init(opens: any NotificationOpens, session: any Session) {
        self.opens = opens
        self.session = session
    }

    public func route(for tap: NotificationTap) async -> Route {
        guard let account = await session.currentAccount() else {
            // The route survives the sign-in screen; the account check happens again after it.
            guard let route = tap.route, route != .home else { return .home }
            if case .signIn = route { return .home }
            return .signIn(then: route)
        }
        if let addressee = tap.accountID, addressee != account { return .home }
        // Reported in its own task: a caller that stops waiting doesn't cancel it.
        let opens = self.opens
        Task.detached { await opens.markOpened(tap) }
        guard let route = tap.route else { return .home }
        if case .signIn = route { return .home }
        return route
    }
}
