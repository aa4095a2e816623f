import Foundation
import Testing
import EnRouteCrypto
import EnRouteModels
import EnRouteNotifications
import EnRouteAPNs
import NotificationsKit

@Suite struct PushPayloadBuilderTests {
    static let at = Date(timeIntervalSince1970: 1_792_521_480)

    static func job(_ stage: OrderStage, rider: String? = "Ana") -> PushJob {
        var job = PushJob(
            kind: .orderUpdate, orderId: "8F3K", accountId: "a1", orderVersion: 7,
            expiresAt: at.addingTimeInterval(3600))
        job.stage = stage
        job.notificationId = "8F3K.7"
        job.riderFirstName = rider
        job.imageUrl = rider == nil ? nil : "https://img.enroute.invalid/rider/12.jpg"
        return job
    }

    static func device(publicKey: [UInt8]?) -> DeviceRecord {
        DeviceRecord(
            token: String(repeating: "ab", count: 32), accountId: "a1", platform: "ios", environment: .production,
            appVersion: "4.2.0", publicKey: publicKey, registeredAt: at)
    }

    @Test func orderUpdateHasExactlyTheSeedsKeysWithAGenericAlert() throws {
        let key = try X25519.publicKey(for: X25519.generatePrivateKey())
        let bytes = try PushPayloadBuilder().orderUpdate(Self.job(.onTheWay), device: Self.device(publicKey: key))
        let root = try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
        #expect(
            Set(root.keys) == ["aps", "notificationId", "accountId", "route", "orderVersion", "secret", "imageUrl"])
        let aps = try #require(root["aps"] as? [String: Any])
        #expect(aps["mutable-content"] as? Int == 1)
        #expect(aps["category"] as? String == "ORDER_UPDATE")
        #expect(aps["thread-id"] as? String == "order-8F3K")
        #expect(aps["interruption-level"] == nil)
        #expect((aps["alert"] as? [String: String]) == ["title": "On the way", "body": "Your order is on the way"])
        #expect(root["route"] as? String == "orders/8F3K")
        #expect(root["orderVersion"] as? Int == 7)
        #expect(root["accountId"] as? String == "a1")
        #expect(!String(decoding: bytes, as: UTF8.self).contains("Ana"), "no personal text in clear")
    }

    @Test func theSecretOpensWithTheClientKitAndTheDeviceKey() throws {
        let privateKey = X25519.generatePrivateKey()
        let bytes = try PushPayloadBuilder().orderUpdate(
            Self.job(.arriving), device: Self.device(publicKey: try X25519.publicKey(for: privateKey)))
        let payload = try #require(NotificationPayload(json: bytes))
        let secret = try #require(payload.secret)
        #expect(NotificationSecret.open(secret, notificationID: "8F3K.7", privateKey: privateKey) == "Ana")
        #expect(
            NotificationSecret.open(secret, notificationID: "8F3K.8", privateKey: privateKey) == nil,
            "bound to its notification")
        #expect(
            NotificationSecret.open(secret, notificationID: "8F3K.7", privateKey: X25519.generatePrivateKey()) == nil)
    }

    @Test func riderArrivingIsTimeSensitiveAndNothingElseIs() throws {
        for stage in OrderStage.allCases {
            let bytes = try PushPayloadBuilder().orderUpdate(Self.job(stage), device: Self.device(publicKey: nil))
            let aps = try #require(
                (try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])?["aps"] as? [String: Any])
            #expect((aps["interruption-level"] as? String == "time-sensitive") == (stage == .arriving), "\(stage)")
        }
    }

    @Test func withoutADeviceKeyThereIsNoSecret() throws {
        let bytes = try PushPayloadBuilder().orderUpdate(Self.job(.onTheWay), device: Self.device(publicKey: nil))
        #expect(NotificationPayload(json: bytes)?.secret == nil)
    }

    @Test func everyGenericBodyHasAClientTemplateOrStandsAlone() {
        for stage in OrderStage.allCases where stage.namesRider {
            #expect(
                PersonalisedCopy.body(generic: stage.genericBody, riderName: "Ana")?.contains("Ana") == true, "\(stage)"
            )
        }
    }

    @Test func payloadsNeverExceedFourKilobytes() throws {
        var job = Self.job(.onTheWay)
        job.imageUrl = "https://img.enroute.invalid/" + String(repeating: "x", count: 5000)
        #expect(throws: PushPayloadBuilder.BuildError.self) {
            try PushPayloadBuilder().orderUpdate(job, device: Self.device(publicKey: nil))
        }
        let normal = try PushPayloadBuilder().orderUpdate(
            Self.job(.onTheWay), device: Self.device(publicKey: try X25519.publicKey(for: X25519.generatePrivateKey())))
        #expect(normal.count <= 4096)
    }

    @Test(arguments: ["8F3K", String(repeating: "Z", count: 80)])
    func collapseIDsStayWithinSixtyFourBytes(orderId: String) {
        for stage in OrderStage.allCases {
            let id = PushPayloadBuilder.collapseID(orderId: orderId, stage: stage)
            #expect(id.utf8.count <= 64)
            #expect(id.hasPrefix("order-") && id.hasSuffix("-\(stage.rawValue)"))
        }
        #expect(PushPayloadBuilder.collapseID(orderId: "8F3K", stage: .onTheWay) == "order-8F3K-onTheWay")
    }

    @Test func liveActivityUpdateMatchesSeedZero() throws {
        var job = PushJob(kind: .liveActivity, orderId: "8F3K", accountId: "a1", orderVersion: 8, expiresAt: Self.at)
        job.event = "update"; job.timestamp = 1_792_521_480; job.staleDate = 1_792_521_660; job.status = "arriving";
        job.etaLatest = 1_792_521_960
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(try PushPayloadBuilder().liveActivity(job))) as? [String: Any])
        #expect(Set(object.keys) == ["aps"])
        let aps = try #require(object["aps"] as? [String: Any])
        #expect(aps["timestamp"] as? Int == 1_792_521_480)
        #expect(aps["event"] as? String == "update")
        #expect(aps["stale-date"] as? Int == 1_792_521_660)
        #expect((aps["content-state"] as? [String: Any])?["status"] as? String == "arriving")
        #expect((aps["content-state"] as? [String: Any])?["etaLatest"] as? Int == 1_792_521_960)
    }

    /// ActivityKit replaces the whole content state with the push's `content-state`, decoded with a plain
    /// `JSONDecoder` into the widget's `ContentState`: every field the app writes must arrive, and nothing else.
    @Test(arguments: OrderStatusWire.allCases, [1_792_521_960, nil] as [Int?])
    func theLiveActivityPushDecodesIntoTheAppsContentStateFieldByField(status: OrderStatusWire, eta: Int?) throws {
        var job = PushJob(kind: .liveActivity, orderId: "8F3K", accountId: "a1", orderVersion: 8, expiresAt: Self.at)
        job.event = "update"; job.timestamp = 1_792_521_480; job.status = status.rawValue; job.etaLatest = eta
        let bytes = try PushPayloadBuilder().liveActivity(job)
        let root = try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
        let aps = try #require(root["aps"] as? [String: Any])
        let contentState = try #require(aps["content-state"] as? [String: Any])
        let decoded = try JSONDecoder().decode(
            OrderActivityContentState.self,
            from: JSONSerialization.data(withJSONObject: contentState))
        #expect(decoded.status == status)
        #expect(decoded.etaLatest == eta)
        #expect(decoded == OrderActivityContentState(status: status, etaLatest: eta))
        #expect(Set(contentState.keys) == (eta == nil ? ["status"] : ["status", "etaLatest"]))
        let written = try JSONSerialization.jsonObject(with: JSONEncoder().encode(decoded)) as? [String: Any]
        #expect(Set(written?.keys ?? [:].keys) == Set(contentState.keys), "what the app writes has the push's keys")
    }

    @Test func aLiveActivityJobWithAnUnknownStatusIsRefused() {
        var job = PushJob(kind: .liveActivity, orderId: "8F3K", accountId: "a1", orderVersion: 8, expiresAt: Self.at)
        job.event = "update"; job.timestamp = 1_792_521_480; job.status = "teleported"
        #expect(throws: PushPayloadBuilder.BuildError.incomplete("event, timestamp and status")) {
            try PushPayloadBuilder().liveActivity(job)
        }
    }

    @Test func anOfferPushCarriesTheOfferEventsFieldsUnderTheOfferCategory() throws {
        let offer = Offer(
            offerId: "K7Q2", tripId: "T9", pickup: Coordinate(lat: 60.1699, lng: 24.9384),
            dropoff: Coordinate(lat: 60.1841, lng: 24.9497), expiresAt: Self.at.addingTimeInterval(15.25))
        let bytes = try PushPayloadBuilder().offer(PushJob.offer(offer, to: "p1"))
        let root = try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
        #expect(
            Set(root.keys) == [
                "aps", "offerId", "tripId", "pickup", "dropoff", "expiresAt", "notificationId", "accountId", "route",
            ])
        #expect(root["expiresAt"] as? String == "2026-10-20T18:38:15.250Z", "ISO 8601, as on the live stream")
        #expect(try WireCoding.decoder().decode(Offer.self, from: Data(bytes)) == offer)
        let aps = try #require(root["aps"] as? [String: Any])
        #expect(aps["category"] as? String == "OFFER")
        #expect(aps["interruption-level"] as? String == "time-sensitive")
        #expect(aps["mutable-content"] == nil, "nothing for the service extension to do")
        let payload = try #require(NotificationPayload(json: bytes))
        #expect(payload.route == .offer("K7Q2") && payload.notificationID == "offer.K7Q2" && payload.accountID == "p1")
    }

    @Test(arguments: ["K7Q2", String(repeating: "Z", count: 80)])
    func offerCollapseIDsAreOnePerOfferWithinSixtyFourBytes(offerId: String) {
        let id = PushPayloadBuilder.collapseID(offerId: offerId)
        #expect(id.utf8.count <= 64 && id.hasPrefix("offer-"))
        #expect(id != PushPayloadBuilder.collapseID(offerId: offerId + "1"))
        #expect(PushPayloadBuilder.collapseID(offerId: "K7Q2") == "offer-K7Q2")
    }

    @Test func apnsIDsAreStableLowercaseUUIDs() {
        let a = PushPayloadBuilder.apnsID(message: "m1", token: "t1")
        #expect(a == PushPayloadBuilder.apnsID(message: "m1", token: "t1"))
        #expect(a != PushPayloadBuilder.apnsID(message: "m1", token: "t2"))
        #expect(UUID(uuidString: a) != nil && a == a.lowercased())
    }
}
