import Foundation
import Testing
import HTTPTransport
import EnRouteNotifications
import EnRouteAPNs
import EnRouteDomain
import EnRouteAPI
import HTTPEngine
import NotificationsKit
import TestSupport

/// A trip change → the outbox → the sender → APNs (the stand-in) → the client kit's service extension logic.
@Suite struct PushEndToEndTests {
    static let deviceToken: [UInt8] = Array(repeating: 0x5a, count: 32)
    static let activityToken = "a1b2c3d4e5f60718293a4b5c6d7e8f90"

    struct SUT {
        var flow: OrderFlow
        let standIn: APNsStandIn
        let devices: any DeviceRepository
        let sender: PushSender
        let keys: InMemoryKeyStore
        let router: Router
    }

    static func makeSUT() async throws -> SUT {
        let flow = OrderFlow()
        let clock = flow.clock
        let standIn = try await APNsStandIn()
        let devices = flow.backend.backend.devices
        let ledger = flow.backend.backend.ledger
        let router = flow.backend.router
        let client = try APNsClient(
            configuration: standIn.configuration, transport: standIn.transport(), now: { clock.date })
        let sender = PushSender(
            store: flow.backend.store, devices: devices, ledger: ledger, gateway: client, clock: clock,
            now: { clock.date })
        return SUT(
            flow: flow, standIn: standIn, devices: devices, sender: sender, keys: InMemoryKeyStore(), router: router)
    }

    /// The customer's app signs in: a key pair, then the device registration through the client kit.
    static func signIn(_ sut: SUT) async throws {
        _ = try await sut.keys.makeKeyPair()
        let server = APIServer(
            baseURL: URL(string: "http://enroute.test")!,
            credentials: StaticAccessToken(sut.flow.backend.token("c1", .customer)))
        let repository = RemoteDeviceRepository(
            http: InProcessHTTPClient(router: sut.router), server: server,
            device: DeviceInfo(environment: "sandbox", appVersion: "4.2.0"), keys: sut.keys)
        try await repository.register(token: DeviceToken(deviceToken), for: "c1")
    }

    @Test func anOrderUpdateReachesAPNsWithTheRightHeadersAndASecretTheDeviceOpens() async throws {
        var sut = try await Self.makeSUT()
        try await Self.signIn(sut)
        try await sut.flow.place()
        try await sut.flow.accept()
        try await sut.flow.riderAndReady()
        try await sut.flow.riderStep("onTheWay")
        try await sut.sender.drain()

        let received = try await sut.standIn.received()
        #expect(received.count == 2)
        let request = try #require(received.last)
        let headers = request["headers"] as? [String: String] ?? [:]
        #expect(request["token"] as? String == DeviceToken(Self.deviceToken).hex)
        #expect(headers["apns-push-type"] == "alert" && headers["apns-topic"] == APNsStandIn.topic)
        #expect(headers["apns-collapse-id"] == "order-\(sut.flow.orderId)-onTheWay")
        #expect(headers["apns-priority"] == "10")
        #expect((request["answer"] as? [String: Any])?["status"] as? Int == 200)

        // The device: the service extension logic decrypts the secret into the body.
        let userInfo = try #require(request["payload"] as? [String: Any])
        let logic = NotificationServiceLogic(
            keys: sut.keys, images: NoImages(), attachments: NoAttachments(), clock: sut.flow.clock)
        let shown = await logic.didReceive(NotificationPayload(userInfo: Self.withoutImage(userInfo)))
        #expect(shown == EnrichedNotification(title: "On the way", body: "Ana is on the way with your order"))
        #expect(NotificationPayload(userInfo: userInfo).route == .order(OrderID(sut.flow.orderId)))
    }

    @Test func liveActivityUpdateAndEndArriveWithRisingTimestamps() async throws {
        var sut = try await Self.makeSUT()
        try await Self.signIn(sut)
        try await sut.flow.place()
        try await sut.flow.liveActivityToken(Self.activityToken)
        for step in ["accept", "ready", "onTheWay", "delivered"] {
            await sut.flow.clock.advance(by: .seconds(90))
            switch step {
            case "accept": try await sut.flow.accept()
            case "ready": try await sut.flow.riderAndReady()
            default: try await sut.flow.riderStep(step)
            }
        }
        try await sut.sender.drain()
        let activity = try await sut.standIn.received().filter { $0["token"] as? String == Self.activityToken }
        let aps = activity.compactMap { ($0["payload"] as? [String: Any])?["aps"] as? [String: Any] }
        #expect(aps.compactMap { $0["event"] as? String }.last == "end")
        #expect(aps.dropLast().allSatisfy { $0["event"] as? String == "update" && $0["stale-date"] != nil })
        let stamps = aps.compactMap { $0["timestamp"] as? Int }
        #expect(
            stamps.count == aps.count && stamps == stamps.sorted() && Set(stamps).count == stamps.count, "\(stamps)")
        #expect(
            activity.allSatisfy {
                ($0["headers"] as? [String: String])?["apns-topic"] == APNsStandIn.topic + ".push-type.liveactivity"
            })
        #expect(activity.allSatisfy { ($0["headers"] as? [String: String])?["apns-push-type"] == "liveactivity" })
    }

    @Test func aTokenAPNsCallsUnregisteredIsDeletedFromTheServer() async throws {
        var sut = try await Self.makeSUT()
        try await Self.signIn(sut)
        let hex = DeviceToken(Self.deviceToken).hex
        try await sut.standIn.script(
            token: hex,
            [
                [
                    "status": 410, "reason": "Unregistered",
                    "timestamp": Int(sut.flow.clock.date.timeIntervalSince1970 * 1000) + 1000,
                ]
            ])
        try await sut.flow.place()
        try await sut.flow.accept()
        try await sut.sender.drain()
        #expect(try await sut.devices.device(token: hex) == nil)
        #expect(
            try await sut.flow.backend.store.dueOutbox(topic: PushJob.topic, now: .distantFuture, limit: 10).isEmpty)
    }

    static func withoutImage(_ userInfo: [String: Any]) -> [AnyHashable: Any] {
        var copy = userInfo
        copy["imageUrl"] = nil
        return copy
    }
}

/// The test sends no image; fetching one is a failure.
struct NoImages: ImageFetcher {
    func fetch(_ url: URL) async throws -> Data {
        Issue.record("unexpected image fetch \(url)"); throw CancellationError()
    }
}

struct NoAttachments: AttachmentWriter {
    func write(_ data: Data, suggestedName: String) throws -> URL {
        Issue.record("unexpected attachment"); throw CancellationError()
    }
}
