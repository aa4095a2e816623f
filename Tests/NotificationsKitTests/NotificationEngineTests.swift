import Testing
import NotificationsKit

@MainActor @Suite struct NotificationEngineTests {
    struct SUT {
        let center: FakeNotificationCenter
        let inbox: RemoteNotificationInboxRepository
        let devices: RecordingRegistration
        let keys: InMemoryKeyStore
        let engine: NotificationEngine
    }

    static func makeSUT(account: AccountID? = "a1") -> SUT {
        let center = FakeNotificationCenter()
        let inbox = RemoteNotificationInboxRepository(
            http: ScriptedHTTPClient([]), server: testServer, clock: ContinuousClock())
        let devices = RecordingRegistration()
        let keys = InMemoryKeyStore()
        return SUT(
            center: center, inbox: inbox, devices: devices, keys: keys,
            engine: NotificationEngine(center: center, inbox: inbox, devices: devices, keys: keys, account: account))
    }

    static let token: [UInt8] = [1, 2, 3, 4, 5, 6, 7, 8]

    @Test func launchSetsTheDelegateFirstDeclaresCategoriesOnceAndRegistersEveryTime() {
        let sut = Self.makeSUT()
        sut.engine.start()
        sut.engine.start()
        #expect(sut.center.calls == [.setDelegate, .setCategories(NotificationCategory.all), .register, .register])
        #expect(NotificationCategory.all.map(\.actionTitle).sorted() == ["See offer", "Track order"])
    }

    @Test func aNewTokenIsRegisteredForTheSignedInAccount() async {
        let sut = Self.makeSUT()
        await sut.engine.didRegister(deviceToken: Self.token)
        #expect(sut.devices.calls == [.register(DeviceToken(Self.token), "a1")])
    }

    @Test func signOutRemovesTheTokenFirstThenTheKey() async throws {
        let sut = Self.makeSUT()
        _ = try await sut.keys.makeKeyPair()
        await sut.engine.didRegister(deviceToken: Self.token)
        await sut.engine.accountChanged(to: nil)
        #expect(sut.devices.calls.last == .unregister)
        #expect(await sut.keys.privateKey() == nil)
        #expect(sut.center.calls.last == .unregister)
    }

    @Test func signInMakesAKeyPairAndRegistersAgain() async {
        let sut = Self.makeSUT(account: nil)
        await sut.engine.didRegister(deviceToken: Self.token)
        await sut.engine.accountChanged(to: "b2")
        #expect(await sut.keys.publicKey() != nil)
        #expect(
            sut.devices.calls == [.register(DeviceToken(Self.token), nil), .register(DeviceToken(Self.token), "b2")])
    }

    @Test func aTapBecomesAnAppModelInTheInbox() async {
        let sut = Self.makeSUT()
        let userInfo: [AnyHashable: Any] = [
            "aps": ["alert": ["title": "On the way", "body": "Your order is on the way"]],
            "notificationId": "91", "accountId": "a1", "route": "orders/8F3K", "orderVersion": 7,
        ]
        await sut.engine.didReceive(userInfo: userInfo, actionIdentifier: NotificationCategory.trackOrderAction)
        var taps = sut.inbox.taps().makeAsyncIterator()
        #expect(await taps.next() == tap("91", action: .trackOrder))
    }

    /// The delegate reads the payload before it changes actors; the tap reaches the inbox before the call returns.
    @Test func aPayloadReadOffTheMainActorReachesTheInbox() async {
        let sut = Self.makeSUT()
        let payload = NotificationPayload(userInfo: [
            "aps": ["alert": ["title": "On the way", "body": "On the way"]],
            "notificationId": "91", "accountId": "a1", "route": "orders/8F3K",
        ])
        await sut.engine.didReceive(payload, actionIdentifier: NotificationCategory.trackOrderAction)
        var taps = sut.inbox.taps().makeAsyncIterator()
        #expect(await taps.next() == tap("91", action: .trackOrder))
        sut.engine.visibleRoute = { .order("8F3K") }
        #expect(sut.engine.willPresent(payload) == .refreshOnly)
    }

    @Test func foregroundPushesBannerUnlessThatOrderIsOnScreen() {
        let sut = Self.makeSUT()
        let push: [AnyHashable: Any] = ["aps": [:] as [String: Any], "route": "orders/8F3K"]
        #expect(sut.engine.willPresent(userInfo: push) == .banner)
        sut.engine.visibleRoute = { .order("8F3K") }
        #expect(sut.engine.willPresent(userInfo: push) == .refreshOnly)
        sut.engine.visibleRoute = { .order("OTHER") }
        #expect(sut.engine.willPresent(userInfo: push) == .banner)
    }

    @Test func permissionGoesThroughTheCenterAndAFailureReadsAsTheCurrentStatus() async {
        let sut = Self.makeSUT()
        #expect(await sut.engine.request(provisional: true) == .quiet)
        #expect(sut.center.calls == [.requestAuthorization(provisional: true)])
    }
}
