import Foundation
import Testing
import EnRouteModels
import EnRouteNotifications
import EnRouteAPNs
import NotificationsKit
import TestSupport

/// Dispatch makes an offer → the outbox → the sender → APNs (the stand-in) → the client kit reads the push.
@Suite(.timeLimit(.minutes(1))) struct OfferPushEndToEndTests {
    static let deviceToken: [UInt8] = Array(repeating: 0x6b, count: 32)

    @Test func anOfferReachesAPNsExpiringWithTheOfferAndOpensTheOfferScreen() async throws {
        let flow = try OfferFlow()
        let standIn = try await APNsStandIn()
        let hex = DeviceToken(Self.deviceToken).hex
        try await flow.registerDevice(hex)
        let offer = try await flow.offer()
        let clock = flow.clock
        let client = try APNsClient(
            configuration: standIn.configuration, transport: standIn.transport(), now: { clock.date })
        try await flow.sender(gateway: client).drain()

        let received = try await standIn.received()
        #expect(received.count == 1)
        let request = try #require(received.first)
        let headers = request["headers"] as? [String: String] ?? [:]
        #expect(request["token"] as? String == hex)
        #expect(headers["apns-push-type"] == "alert" && headers["apns-topic"] == APNsStandIn.topic)
        #expect(headers["apns-priority"] == "10")
        #expect(headers["apns-expiration"] == String(Int(offer.expiresAt.timeIntervalSince1970)))
        #expect(headers["apns-collapse-id"] == "offer-\(offer.offerId)")
        #expect((request["answer"] as? [String: Any])?["status"] as? Int == 200)

        // The provider's device: the OFFER category, a tap that lands on the offer, counted once as a "See offer" open.
        let userInfo = try #require(request["payload"] as? [String: Any])
        let payload = NotificationPayload(userInfo: userInfo)
        #expect(payload.category == NotificationCategory.offer.identifier)
        #expect(payload.route == .offer(OfferID(offer.offerId)))
        let tap = try #require(payload.tap(action: .seeOffer))
        #expect(tap.accountID == AccountID(flow.provider))
        let opened = await flow.call(
            "POST", "/v1/notifications/\(tap.id.rawValue)/opened", as: flow.provider, .provider,
            json: #"{"action":"seeOffer"}"#)
        #expect(opened.status == 204)
        #expect(
            flow.metrics.counter("enroute_notification_opens_total", labels: ["campaign": "tripOffers", "stage": ""])
                == 1)
    }
}
