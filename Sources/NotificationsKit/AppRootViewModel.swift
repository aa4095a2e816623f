public import Observation

/// Owns the root's tab and path, and applies each route the open use case returns.
///
/// It listens for taps only once the UI exists; a cold-launch tap waits in the inbox until then.
/// A route replaces the path: three order taps leave one order screen.
@MainActor @Observable
public final class AppRootViewModel {
    @ObservationIgnored private let inbox: any NotificationInbox
    @ObservationIgnored private let openNotification: any OpenNotificationUseCase
    @ObservationIgnored private var listening = false

    public private(set) var viewState = AppRootViewState(tab: .home, path: [])

    public init(inbox: any NotificationInbox, openNotification: any OpenNotificationUseCase) {
        self.inbox = inbox
        self.openNotification = openNotification
    }

    /// Starts watching taps. Runs until the root goes away (its task is cancelled).
    public func onAppear() async {
        guard !listening else { return }
        listening = true
        defer { listening = false }
        for await tap in inbox.taps() {
            apply(await openNotification.route(for: tap))
        }
    }

    public func select(_ tab: AppTab) { viewState = AppRootViewState(tab: tab, path: []) }

    public func pathChanged(_ path: [Route]) { viewState = AppRootViewState(tab: viewState.tab, path: path) }

    /// A change reported by `tab`'s own navigation stack; a stack of a tab that is not selected changes nothing.
    public func pathChanged(_ path: [Route], in tab: AppTab) {
        guard tab == viewState.tab else { return }
        pathChanged(path)
    }

    /// Applies a route from a tap or a universal link.
    public func open(_ route: Route) { apply(route) }

    /// The screen on top, for the foreground presentation policy.
    public var visibleRoute: Route? { viewState.path.last }

    private func apply(_ route: Route) {
        switch route {
        case .home: viewState = AppRootViewState(tab: .home, path: [])
        case .order: viewState = AppRootViewState(tab: .orders, path: [route])
        case .offer: viewState = AppRootViewState(tab: .home, path: [route])
        case .signIn: viewState = AppRootViewState(tab: viewState.tab, path: [route])
        }
    }
}
