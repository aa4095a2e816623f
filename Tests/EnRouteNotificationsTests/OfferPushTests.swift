import Foundation
import Testing
import EnRouteModels
import EnRouteNotifications
import EnRouteAPNs
import EnRouteDomain
import EnRouteAPI
import TestSupport

/// Offers also go out as a platform push: planned when dispatch makes the offer, sent by the outbox sender while the
/// offer is still open, never past its expiry.
@Suite(.timeLimit(.minutes(1))) struct OfferPushTests {
    static let token = String(repeating: "cd", count: 32)

    enum Ending: String, CaseIterable, CustomTestStringConvertible {
        case declined, accepted, withdrawn, expired
        var testDescription: String { rawValue }
    }

    @Test func anOfferToAProviderWithADeviceQueuesExactlyOnePushCarryingTheOffer() async throws {
        let flow = try OfferFlow()
        try await flow.registerDevice(Self.token)
        let offer = try await flow.offer()

        let queued = try await flow.outbox()
        #expect(queued.count == 1)
        let job = try PushJob.decode(try #require(queued.first).payload)
        #expect(job.kind == .offer && job.accountId == flow.provider)
        #expect(job.offer == offer && job.expiresAt == offer.expiresAt)

        let gateway = FakePushGateway(defaultOutcome: .delivered)
        try await flow.sender(gateway: gateway).drain()
        #expect(gateway.sent.count == 1)
        let push = try #require(gateway.sent.first)
        #expect(push.token == Self.token && push.environment == .sandbox)
        #expect(push.pushType == .alert && push.priority == 10)
        #expect(push.expiration == offer.expiresAt)
        #expect(push.collapseID == "offer-\(offer.offerId)")
        // The payload reads as the live stream's `offer` event, under the OFFER category.
        #expect(try WireCoding.decoder().decode(Offer.self, from: Data(push.payload)) == offer)
        let root = try #require(try JSONSerialization.jsonObject(with: Data(push.payload)) as? [String: Any])
        let aps = try #require(root["aps"] as? [String: Any])
        #expect(aps["category"] as? String == "OFFER")
        #expect(root["route"] as? String == "offers/\(offer.offerId)")
        #expect(root["notificationId"] as? String == "offer.\(offer.offerId)")
        #expect(try await flow.outbox().isEmpty)
    }

    @Test func anOfferToAProviderWithoutADeviceQueuesNothing() async throws {
        let flow = try OfferFlow()
        _ = try await flow.offer()
        #expect(try await flow.outbox().isEmpty)
    }

    @Test(arguments: Ending.allCases)
    func anOfferThatEndedBeforeTheSenderRanIsNotSent(_ ending: Ending) async throws {
        let flow = try OfferFlow()
        try await flow.registerDevice(Self.token)
        let offer = try await flow.offer()
        switch ending {
        case .declined:
            #expect(
                await flow.call("POST", "/v1/provider/offers/\(offer.offerId)/decline", as: flow.provider, .provider)
                    .status == 204)
        case .accepted:
            #expect(
                await flow.call("POST", "/v1/provider/offers/\(offer.offerId)/accept", as: flow.provider, .provider)
                    .status == 200)
        case .withdrawn:
            _ = try await flow.providers.setAvailability(AvailabilityRequest(online: false), provider: flow.provider)
        case .expired:
            await flow.clock.advance(by: .seconds(16))
        }
        if ending != .expired { #expect(flow.providers.dispatcher.liveOffer(heldBy: flow.provider) == nil) }

        let gateway = FakePushGateway()  // any push fails the test
        try await flow.sender(gateway: gateway).drain()
        #expect(gateway.sent.isEmpty)
        #expect(try await flow.outbox().isEmpty, "the ended offer's job leaves the outbox")
        let result = ending == .expired ? "expired" : "offerEnded"
        #expect(flow.metrics.counter("enroute_push_outbox_done_total", labels: ["result": result]) == 1)
    }

    /// The first throttling backoff (30 s) is longer than the offer (15 s): there is no second attempt.
    @Test func aRetryThatCouldOnlyComeAfterTheOfferExpiresIsNeverMade() async throws {
        let flow = try OfferFlow()
        try await flow.registerDevice(Self.token)
        _ = try await flow.offer()
        let gateway = FakePushGateway(script: [.retry(.throttled, reason: "TooManyRequests")])
        try await flow.sender(gateway: gateway).drain()
        #expect(gateway.sent.count == 1)
        #expect(try await flow.outbox().isEmpty)
        #expect(flow.metrics.counter("enroute_push_outbox_done_total", labels: ["result": "expired"]) == 1)
    }

    /// Even when nobody says the offer ended, the sender's own check of the expiry stops the retry.
    @Test func aRetryDueAfterTheOfferExpiredIsNotSent() async throws {
        let flow = try OfferFlow()
        try await flow.registerDevice(Self.token)
        _ = try await flow.offer()
        let gateway = FakePushGateway(script: [.retry(.network, reason: "connection reset")])
        let sender = flow.sender(gateway: gateway, offerIsOpen: { _, _ in true })
        try await sender.drain()
        #expect(
            try await flow.outbox().first?.notBefore == flow.clock.date.addingTimeInterval(5),
            "retried within the offer's life")
        await flow.clock.advance(by: .seconds(16))
        try await sender.drain()
        #expect(gateway.sent.count == 1)
        #expect(try await flow.outbox().isEmpty)
        #expect(flow.metrics.counter("enroute_push_outbox_done_total", labels: ["result": "expired"]) == 1)
    }

    /// A new offer's job wakes the backend's running sender: it goes out without waiting for the next poll.
    @Test func aRunningSenderSendsANewOfferWithoutWaitingForItsPoll() async throws {
        let (sends, sent) = AsyncStream<APNsPush>.makeStream()
        let flow = try OfferFlow(push: FakePushGateway(defaultOutcome: .delivered, onSend: { sent.yield($0) }))
        try await flow.registerDevice(Self.token)
        let loop = Task { await flow.backend.backend.sender.run() }
        await flow.clock.sleepers(atLeast: 1)
        let start = flow.clock.now

        let offer = try await flow.offer()
        var pushes = sends.makeAsyncIterator()
        let push = try #require(await pushes.next())
        #expect(push.collapseID == "offer-\(offer.offerId)")
        #expect(flow.clock.now == start, "the clock never moved: the offer's job woke the sender")

        loop.cancel()
        await loop.value
    }
}
