import Foundation
import Testing
import EnRouteNotifications
import EnRouteAPNs
import TestSupport

/// The APNs client over libcurl HTTP/2 against the local stand-in (Fixtures/apns_standin.py).
@Suite struct APNsClientTests {
    static let device = String(repeating: "0f", count: 32)

    struct SUT {
        let standIn: APNsStandIn
        let transport: CurlAPNsTransport
        let client: APNsClient
        let clock: ManualClock
    }

    static func makeSUT() async throws -> SUT {
        let standIn = try await APNsStandIn()
        let clock = ManualClock()
        let transport = standIn.transport()
        let client = try APNsClient(configuration: standIn.configuration, transport: transport, now: { clock.date })
        return SUT(standIn: standIn, transport: transport, client: client, clock: clock)
    }

    static func push(
        _ n: Int = 1, type: APNsPush.PushType = .alert, environment: APNsEnvironment = .production,
        token: String = device
    ) -> APNsPush {
        APNsPush(
            token: token, environment: environment, pushType: type, priority: type == .alert ? 10 : 5,
            expiration: Date(timeIntervalSince1970: 1_792_523_600),
            collapseID: type == .alert ? "order-O1-onTheWay" : nil,
            apnsID: PushPayloadBuilder.apnsID(message: "m\(n)", token: token),
            payload: Array(
                #"{"aps":{"alert":{"title":"On the way","body":"Your order is on the way"},"mutable-content":1}}"#.utf8)
        )
    }

    static func jwt(_ request: [String: Any]) -> String? { (request["jwt"] as? [String: Any])?["token"] as? String }
    static func headers(_ request: [String: Any]) -> [String: String] { request["headers"] as? [String: String] ?? [:] }

    @Test func anAlertCarriesEveryHeaderAndAVerifiedProviderToken() async throws {
        let sut = try await Self.makeSUT()
        #expect(await sut.client.send(Self.push()) == .delivered)
        let request = try #require(try await sut.standIn.received().first)
        #expect(request["path"] as? String == "/3/device/\(Self.device)")
        let h = Self.headers(request)
        #expect(h["apns-push-type"] == "alert")
        #expect(h["apns-topic"] == APNsStandIn.topic)
        #expect(h["apns-priority"] == "10")
        #expect(h["apns-expiration"] == "1792523600")
        #expect(h["apns-collapse-id"] == "order-O1-onTheWay")
        #expect(h["apns-id"] == Self.push().apnsID)
        let jwt = try #require(request["jwt"] as? [String: Any])
        #expect((jwt["claims"] as? [String: Any])?["iss"] as? String == APNsStandIn.teamID)
        #expect((jwt["header"] as? [String: Any])?["kid"] as? String == APNsStandIn.keyID)
        #expect(
            (request["answer"] as? [String: Any])?["status"] as? Int == 200, "the stand-in verified the ES256 signature"
        )
    }

    @Test func liveActivityPushesUseTheLiveActivityTopic() async throws {
        let sut = try await Self.makeSUT()
        #expect(await sut.client.send(Self.push(type: .liveactivity)) == .delivered)
        let h = Self.headers(try #require(try await sut.standIn.received().first))
        #expect(h["apns-topic"] == APNsStandIn.topic + ".push-type.liveactivity")
        #expect(h["apns-push-type"] == "liveactivity")
        #expect(h["apns-priority"] == "5")
    }

    @Test func theProviderTokenIsReusedAndMintedAgainOnlyWhenDue() async throws {
        let sut = try await Self.makeSUT()
        _ = await sut.client.send(Self.push(1))
        await sut.clock.advance(by: .seconds(19 * 60))
        _ = await sut.client.send(Self.push(2))
        await sut.clock.advance(by: .seconds(31 * 60))  // 50 minutes old now
        _ = await sut.client.send(Self.push(3))
        let tokens = try await sut.standIn.received().map { Self.jwt($0) }
        #expect(tokens.count == 3)
        #expect(tokens[0] == tokens[1], "reused inside 20 minutes")
        #expect(tokens[1] != tokens[2], "minted again within the hour")
    }

    @Test func anExpiredProviderTokenIsMintedAgainAndThePushRetried() async throws {
        let sut = try await Self.makeSUT()
        _ = await sut.client.send(Self.push(1))
        await sut.clock.advance(by: .seconds(25 * 60))
        try await sut.standIn.script(token: Self.device, [["status": 403, "reason": "ExpiredProviderToken"]])
        #expect(await sut.client.send(Self.push(2)) == .delivered)
        let tokens = try await sut.standIn.received().map { Self.jwt($0) }
        #expect(tokens.count == 3)
        #expect(tokens[0] == tokens[1] && tokens[1] != tokens[2])
    }

    @Test func aYoungTokenCalledExpiredIsNotReplacedTooSoon() async throws {
        let sut = try await Self.makeSUT()
        try await sut.standIn.script(token: Self.device, [["status": 403, "reason": "ExpiredProviderToken"]])
        #expect(await sut.client.send(Self.push()) == .retry(.configuration, reason: "ExpiredProviderToken"))
        #expect(try await sut.standIn.received().count == 1)
    }

    @Test(arguments: [
        (410, "Unregistered", PushOutcome.tokenInvalid(since: 1_792_519_000)),
        (410, "ExpiredToken", PushOutcome.tokenInvalid(since: 1_792_519_000)),
        (400, "BadDeviceToken", PushOutcome.tokenInvalid(since: nil)),
        (400, "DeviceTokenNotForTopic", PushOutcome.rejected(reason: "400 DeviceTokenNotForTopic")),
        (413, "PayloadTooLarge", PushOutcome.rejected(reason: "413 PayloadTooLarge")),
        (429, "TooManyRequests", PushOutcome.retry(.throttled, reason: "TooManyRequests")),
        (429, "TooManyProviderTokenUpdates", PushOutcome.retry(.throttled, reason: "TooManyProviderTokenUpdates")),
        (500, "InternalServerError", PushOutcome.retry(.serverError, reason: "InternalServerError")),
        (503, "ServiceUnavailable", PushOutcome.retry(.serverError, reason: "ServiceUnavailable")),
        (403, "InvalidProviderToken", PushOutcome.retry(.configuration, reason: "InvalidProviderToken")),
        (403, "Forbidden", PushOutcome.rejected(reason: "Forbidden")),
        (400, "BadTopic", PushOutcome.retry(.configuration, reason: "BadTopic")),
    ])
    func everyReasonMapsToItsHandling(status: Int, reason: String, expected: PushOutcome) async throws {
        let sut = try await Self.makeSUT()
        var response: [String: Any] = ["status": status, "reason": reason]
        if status == 410 { response["timestamp"] = 1_792_519_000_000 }
        try await sut.standIn.script(token: Self.device, [response])
        #expect(await sut.client.send(Self.push()) == expected)
    }

    @Test func concurrentPushesShareOneMultiplexedConnectionPerEnvironment() async throws {
        let sut = try await Self.makeSUT()
        _ = await sut.client.send(Self.push(0))  // the first push binds the connection (one stream until then)
        let outcomes = await withTaskGroup(of: PushOutcome.self) { group in
            for n in 1...8 { group.addTask { await sut.client.send(Self.push(n)) } }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(outcomes.allSatisfy { $0 == .delivered })
        _ = await sut.client.send(Self.push(9, environment: .sandbox))
        let received = try await sut.standIn.received()
        let production = Set(
            received.filter { Self.headers($0)["apns-id"] != Self.push(9, environment: .sandbox).apnsID }.compactMap {
                $0["connection"] as? Int
            })
        #expect(production.count == 1)
        #expect(sut.transport.connectionsOpened(.production) == 1)
        #expect(sut.transport.connectionsOpened(.sandbox) == 1)
        #expect(Set(received.compactMap { $0["connection"] as? Int }).count == 2)
    }
}
