import Testing
import NotificationsKit
import TestSupport

@MainActor @Suite struct AppRootViewModelTests {
    static func makeSUT(session: FakeSession) -> (AppRootViewModel, RemoteNotificationInboxRepository, RecordingOpens) {
        let inbox = RemoteNotificationInboxRepository(
            http: ScriptedHTTPClient([]), server: testServer, clock: ManualClock())
        let opens = RecordingOpens()
        let viewModel = AppRootViewModel(
            inbox: inbox, openNotification: DefaultOpenNotificationUseCase(opens: opens, session: session))
        return (viewModel, inbox, opens)
    }

    /// Runs the root until `condition` holds for its state.
    static func run(_ viewModel: AppRootViewModel, until condition: @escaping (AppRootViewState) -> Bool) async throws {
        let root = Task { await viewModel.onAppear() }
        defer { root.cancel() }
        try await eventually("the root's state") { condition(viewModel.viewState) }
    }

    @Test func aColdLaunchTapWaitsUntilTheRootSubscribes() async throws {
        let (viewModel, inbox, opens) = Self.makeSUT(session: FakeSession("a1"))
        await inbox.receive(tap("91"))  // before any UI exists
        #expect(viewModel.viewState.path.isEmpty)
        try await Self.run(viewModel) { !$0.path.isEmpty }
        #expect(viewModel.viewState == AppRootViewState(tab: .orders, path: [.order("8F3K")]))
        await opens.waitForOpens(1)
    }

    @Test func threeTapsForOneOrderLeaveOneScreen() async throws {
        let (viewModel, inbox, opens) = Self.makeSUT(session: FakeSession("a1"))
        for id in ["91", "92", "93"] { await inbox.receive(tap(id)) }
        try await Self.run(viewModel) { _ in opens.opened.count == 3 }
        #expect(viewModel.viewState.path == [.order("8F3K")])
    }

    /// A shared iPad: A signed out while offline, so A's pushes still arrive; a tap must not open A's order.
    @Test func aFamilyIPadSignedOutOfflineGetsTheOldAccountsPushAndTheTapGoesHome() async throws {
        let session = FakeSession("a1")
        let inbox = RemoteNotificationInboxRepository(
            http: ScriptedHTTPClient([]), server: testServer, clock: ManualClock())
        let routed = SpyOpenNotification(DefaultOpenNotificationUseCase(opens: NoOpens(), session: session))
        let viewModel = AppRootViewModel(inbox: inbox, openNotification: routed)
        let devices = RecordingRegistration()
        devices.goOffline()
        let engine = NotificationEngine(
            center: FakeNotificationCenter(), inbox: inbox, devices: devices, keys: InMemoryKeyStore(), account: "a1")
        await engine.accountChanged(to: nil)
        session.set(nil)
        #expect(devices.calls == [.unregister], "the DELETE failed: the server still sends A's pushes here")

        await engine.didReceive(
            userInfo: ["aps": [:] as [String: Any], "notificationId": "91", "accountId": "a1", "route": "orders/8F3K"],
            actionIdentifier: "com.apple.UNNotificationDefaultActionIdentifier")
        #expect(viewModel.viewState == AppRootViewState(tab: .home, path: []))
        await inbox.receive(tap("99", account: nil, route: .home))  // a marker queued behind it
        try await Self.run(viewModel) { _ in routed.ids.contains("99") }
        #expect(routed.ids == ["99"], "A's tap never reaches routing")
        #expect(viewModel.viewState == AppRootViewState(tab: .home, path: []))
    }

    @Test func anotherAccountsTapLandsHome() async throws {
        let (viewModel, inbox, _) = Self.makeSUT(session: FakeSession("b2"))
        viewModel.pathChanged([.offer("7")])
        await inbox.receive(tap("91", account: "a1"))
        try await Self.run(viewModel) { $0.path.isEmpty }
        #expect(viewModel.viewState == AppRootViewState(tab: .home, path: []))
    }

    @Test func signedOutTheTapAsksForSignInFirst() async throws {
        let (viewModel, inbox, _) = Self.makeSUT(session: FakeSession(nil))
        await inbox.receive(tap("91"))
        try await Self.run(viewModel) { !$0.path.isEmpty }
        #expect(viewModel.viewState.path == [.signIn(then: .order("8F3K"))])
    }
}

/// Records the taps it routes, then routes them with the real use case.
@MainActor
final class SpyOpenNotification: OpenNotificationUseCase {
    private let inner: any OpenNotificationUseCase
    private(set) var ids: [NotificationID] = []
    init(_ inner: any OpenNotificationUseCase) { self.inner = inner }
    func route(for tap: NotificationTap) async -> Route {
        ids.append(tap.id)
        return await inner.route(for: tap)
    }
}

@MainActor @Suite struct AppRootTabPathTests {
    /// Each tab has its own navigation stack: an order opened in Orders never shows in Home's stack.
    @Test func onlyTheSelectedTabHasThePath() {
        let state = AppRootViewState(tab: .orders, path: [.order("8F3K")])
        #expect(state.path(in: .orders) == [.order("8F3K")])
        #expect(state.path(in: .home).isEmpty)
    }

    @Test func aTabThatIsNotShownCannotChangeThePath() {
        let (viewModel, _, _) = AppRootViewModelTests.makeSUT(session: FakeSession("a1"))
        viewModel.open(.order("8F3K"))
        viewModel.pathChanged([], in: .home)
        #expect(viewModel.viewState == AppRootViewState(tab: .orders, path: [.order("8F3K")]))
        viewModel.pathChanged([], in: .orders)
        #expect(viewModel.viewState == AppRootViewState(tab: .orders, path: []))
    }
}
