import Testing
import NotificationsKit

@MainActor @Suite struct OpenNotificationUseCaseTests {
    @Test func theSignedInAccountsTapOpensItsOrderAndIsReported() async {
        let opens = RecordingOpens()
        let route = await DefaultOpenNotificationUseCase(opens: opens, session: FakeSession("a1")).route(
            for: tap("91", action: .trackOrder))
        #expect(route == .order("8F3K"))
        await opens.waitForOpens(1)
        #expect(opens.opened == [tap("91", action: .trackOrder)])
    }

    @Test func anotherAccountsTapGoesHomeUnreported() async {
        let route = await DefaultOpenNotificationUseCase(opens: NoOpens(), session: FakeSession("a2")).route(
            for: tap("91"))
        #expect(route == .home)
    }

    @Test func signedOutTheRouteWaitsBehindSignIn() async {
        let route = await DefaultOpenNotificationUseCase(opens: NoOpens(), session: FakeSession(nil)).route(
            for: tap("91"))
        #expect(route == .signIn(then: .order("8F3K")))
    }

    @Test func anUnreadableRouteGoesHome() async {
        let opens = RecordingOpens()
        #expect(
            await DefaultOpenNotificationUseCase(opens: opens, session: FakeSession("a1")).route(
                for: tap("91", route: nil)) == .home)
        #expect(
            await DefaultOpenNotificationUseCase(opens: NoOpens(), session: FakeSession(nil)).route(
                for: tap("92", route: nil)) == .home)
    }

    @Test func theOpenIsReportedEvenIfTheCallerStopsWaiting() async {
        let opens = RecordingOpens()
        let useCase = DefaultOpenNotificationUseCase(opens: opens, session: FakeSession("a1"))
        let caller = Task { await useCase.route(for: tap("91")) }
        caller.cancel()
        _ = await caller.value
        await opens.waitForOpens(1)
        #expect(opens.opened.map(\.id) == ["91"])
    }
}
