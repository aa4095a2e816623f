import Foundation
import Synchronization
import Testing
import EnRouteDomain
import EnRouteSandbox

/// The sandbox gateway answers Stripe's test payment methods as Stripe's testing page says, with Stripe's idempotency.
@Suite struct SandboxGatewayTests {
    static let base = URL(string: "http://127.0.0.1:8080")!
    static let at = Date(timeIntervalSince1970: 1_792_520_000)

    func makeSUT() -> SandboxGateway {
        SandboxGateway(baseURL: Self.base, ids: SequentialIDGenerator(prefix: ""), now: { Self.at })
    }

    func request(
        _ token: String, amount: Int = 1_000, key: String = "hold:q1", description: String = "EnRoute ride T1"
    ) -> AuthorizationRequest {
        AuthorizationRequest(
            amountMinor: amount, currency: "EUR", paymentMethod: token, idempotencyKey: key, description: description)
    }

    /// How a payment on a card is expected to end, written out from Stripe's testing page independently of the sandbox.
    enum Expect: Sendable { case approved, challenge, declined(code: String, declineCode: String) }

    struct Card: Sendable, CustomTestStringConvertible {
        let token: String, brand: String, last4: String, hold: Expect, offSession: Expect
        var testDescription: String { token }
    }

    static let cards: [Card] = [
        Card(token: "pm_card_visa", brand: "visa", last4: "4242", hold: .approved, offSession: .approved),
        Card(token: "pm_card_mastercard", brand: "mastercard", last4: "4444", hold: .approved, offSession: .approved),
        Card(
            token: "pm_card_visa_chargeDeclined", brand: "visa", last4: "0002",
            hold: .declined(code: "card_declined", declineCode: "generic_decline"),
            offSession: .declined(code: "card_declined", declineCode: "generic_decline")),
        Card(
            token: "pm_card_visa_chargeDeclinedInsufficientFunds", brand: "visa", last4: "9995",
            hold: .declined(code: "card_declined", declineCode: "insufficient_funds"),
            offSession: .declined(code: "card_declined", declineCode: "insufficient_funds")),
        Card(
            token: "pm_card_authenticationRequired", brand: "visa", last4: "3184",
            hold: .challenge,
            offSession: .declined(code: "authentication_required", declineCode: "authentication_required")),
        Card(
            token: "pm_card_chargeCustomerFail", brand: "visa", last4: "0341",
            hold: .approved, offSession: .declined(code: "card_declined", declineCode: "generic_decline")),
    ]

    @Test func theTableCoversEveryTestCardTheSandboxKnows() {
        #expect(Set(SandboxGateway.testCards.map(\.token)) == Set(Self.cards.map(\.token)))
    }

    /// Each card through describe, a hold, capture (partial) or cancel, and an off-session charge.
    @Test(arguments: cards)
    func everyTestCardThroughHoldCaptureCancelAndCharge(_ card: Card) async throws {
        let sut = makeSUT()
        let details = try await sut.describe(token: card.token)
        #expect(details.brand == card.brand && details.last4 == card.last4)

        // Hold, then capture 600 of 1,000.
        var held: GatewayIntent?
        switch card.hold {
        case .approved:
            let intent = try await sut.authorize(request(card.token, key: "hold:a"))
            #expect(intent.status == .requiresCapture && intent.amountCapturable == 1_000 && intent.amountReceived == 0)
            held = intent
        case .challenge:
            let intent = try await sut.authorize(request(card.token, key: "hold:a"))
            #expect(intent.status == .requiresAction && intent.amountCapturable == 0)
            #expect(
                intent.actionURL == URL(string: "http://127.0.0.1:8080/v1/payments/sandbox/challenges/\(intent.id)"))
            await #expect(throws: PaymentGatewayError.self) {
                try await sut.capture(intentId: intent.id, amountMinor: 600, idempotencyKey: "cap:early")
            }
            try sut.completeChallenge(intentId: intent.id)
            let now = try await sut.retrieve(intentId: intent.id)
            #expect(now.status == .requiresCapture && now.amountCapturable == 1_000 && now.actionURL == nil)
            held = now
        case .declined(let code, let declineCode):
            let error = await #expect(throws: PaymentGatewayError.self) {
                try await sut.authorize(request(card.token, key: "hold:a"))
            }
            guard case .declined(let decline, let intent?) = error else {
                Issue.record("expected a decline, got \(String(describing: error))"); return
            }
            #expect(decline.code == code && decline.declineCode == declineCode)
            #expect(
                intent.status == .requiresPaymentMethod && intent.amountCapturable == 0 && intent.lastError == decline)
            await #expect(throws: PaymentGatewayError.self) {
                try await sut.capture(intentId: intent.id, amountMinor: 600, idempotencyKey: "cap:a")
            }
        }
        if let held {
            let captured = try await sut.capture(intentId: held.id, amountMinor: 600, idempotencyKey: "cap:a")
            #expect(captured.status == .succeeded && captured.amountReceived == 600 && captured.amountCapturable == 0)
            // A second hold, released.
            let other = try await sut.authorize(request(card.token, key: "hold:b", description: "EnRoute ride T2"))
            if other.status == .requiresAction { try sut.completeChallenge(intentId: other.id) }
            let canceled = try await sut.cancel(intentId: other.id, idempotencyKey: "cancel:b")
            #expect(canceled.status == .canceled && canceled.amountCapturable == 0 && canceled.amountReceived == 0)
        }

        // Off-session charge.
        switch card.offSession {
        case .approved:
            let charged = try await sut.charge(request(card.token, amount: 250, key: "charge:a"))
            #expect(charged.status == .succeeded && charged.amountReceived == 250)
        case .declined(let code, let declineCode):
            let error = await #expect(throws: PaymentGatewayError.self) {
                try await sut.charge(request(card.token, amount: 250, key: "charge:a"))
            }
            guard case .declined(let decline, let intent?) = error else {
                Issue.record("expected a decline, got \(String(describing: error))"); return
            }
            #expect(
                decline.code == code && decline.declineCode == declineCode && intent.status == .requiresPaymentMethod)
        case .challenge:
            Issue.record("an off-session charge never waits for a challenge")
        }
        #expect(sut.openHolds().isEmpty)
    }

    @Test func anUnknownTokenIsRejectedAndCreatesNothing() async {
        let sut = makeSUT()
        for call in [
            { _ = try await sut.describe(token: "pm_nope") }, { _ = try await sut.authorize(request("pm_nope")) },
            { _ = try await sut.charge(request("pm_nope", key: "charge:x")) },
        ] as [@Sendable () async throws -> Void] {
            let error = await #expect(throws: PaymentGatewayError.self) { try await call() }
            #expect(error == .rejected("No such PaymentMethod: 'pm_nope'"))
        }
        #expect(sut.intents().isEmpty && sut.sentEvents().isEmpty)
    }

    @Test func theSameKeyReturnsTheSameIntentAndNeverASecondHold() async throws {
        let sut = makeSUT()
        let first = try await sut.authorize(request("pm_card_visa"))
        let again = try await sut.authorize(request("pm_card_visa"))
        #expect(again == first)
        #expect(sut.intents().count == 1)
    }

    @Test func concurrentHoldsUnderOneKeyMakeOneHold() async throws {
        let sut = makeSUT()
        let ids = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<200 { group.addTask { try await sut.authorize(self.request("pm_card_visa")).id } }
            return try await group.reduce(into: Set<String>()) { $0.insert($1) }
        }
        #expect(ids.count == 1 && sut.intents().count == 1)
    }

    @Test func aDeclineIsReplayedForTheSameKeyWithoutASecondAttempt() async {
        let sut = makeSUT()
        let first = await #expect(throws: PaymentGatewayError.self) {
            try await sut.authorize(request("pm_card_visa_chargeDeclined"))
        }
        let again = await #expect(throws: PaymentGatewayError.self) {
            try await sut.authorize(request("pm_card_visa_chargeDeclined"))
        }
        #expect(first != nil && again == first)
        #expect(sut.intents().count == 1)
        #expect(sut.sentEvents().map(\.type) == ["payment_intent.payment_failed"])
    }

    @Test func theSameKeyWithOtherParametersIsRefused() async throws {
        let sut = makeSUT()
        _ = try await sut.authorize(request("pm_card_visa", amount: 1_000))
        let error = await #expect(throws: PaymentGatewayError.self) {
            try await sut.authorize(request("pm_card_visa", amount: 2_000))
        }
        guard case .rejected(let message) = error else { Issue.record("expected a rejection"); return }
        #expect(message.contains("same parameters"))
        #expect(sut.intents().count == 1)
    }

    @Test func aCaptureAboveTheHoldIsRejectedAndLeavesTheHold() async throws {
        let sut = makeSUT()
        let held = try await sut.authorize(request("pm_card_visa"))
        await #expect(throws: PaymentGatewayError.self) {
            try await sut.capture(intentId: held.id, amountMinor: 1_001, idempotencyKey: "cap:1")
        }
        #expect(try await sut.retrieve(intentId: held.id) == held)
        // A rejection is not saved: the same key with a good amount goes through.
        let captured = try await sut.capture(intentId: held.id, amountMinor: 1_000, idempotencyKey: "cap:1")
        #expect(captured.status == .succeeded && captured.amountReceived == 1_000)
    }

    @Test func aCaptureReplayedUnderItsKeyCapturesOnce() async throws {
        let sut = makeSUT()
        let held = try await sut.authorize(request("pm_card_visa"))
        let first = try await sut.capture(intentId: held.id, amountMinor: 700, idempotencyKey: "cap:1")
        #expect(try await sut.capture(intentId: held.id, amountMinor: 700, idempotencyKey: "cap:1") == first)
        let error = await #expect(throws: PaymentGatewayError.self) {
            try await sut.capture(intentId: held.id, amountMinor: 300, idempotencyKey: "cap:2")
        }
        guard case .rejected(let message) = error else { Issue.record("expected a rejection"); return }
        #expect(message.contains("status of succeeded"))
        #expect(sut.sentEvents().filter { $0.type == "payment_intent.succeeded" }.count == 1)
    }

    @Test func cancelReleasesAHoldAndACapturedIntentCannotBeCanceled() async throws {
        let sut = makeSUT()
        let held = try await sut.authorize(request("pm_card_visa"))
        let canceled = try await sut.cancel(intentId: held.id, idempotencyKey: "cancel:1")
        #expect(canceled.status == .canceled && canceled.amountCapturable == 0)
        await #expect(throws: PaymentGatewayError.self) {
            try await sut.capture(intentId: held.id, amountMinor: 100, idempotencyKey: "cap:1")
        }
        let other = try await sut.authorize(request("pm_card_visa", key: "hold:2"))
        _ = try await sut.capture(intentId: other.id, amountMinor: 100, idempotencyKey: "cap:2")
        await #expect(throws: PaymentGatewayError.self) {
            try await sut.cancel(intentId: other.id, idempotencyKey: "cancel:2")
        }
    }

    @Test func aFailedChallengeLeavesNothingHeld() async throws {
        let sut = makeSUT()
        let pending = try await sut.authorize(request("pm_card_authenticationRequired"))
        #expect(sut.openHolds().map(\.id) == [pending.id])
        let failed = try sut.failChallenge(intentId: pending.id)
        #expect(
            failed.status == .requiresPaymentMethod && failed.lastError?.code == "payment_intent_authentication_failure"
        )
        #expect(try await sut.retrieve(intentId: pending.id) == failed)
        #expect(throws: PaymentGatewayError.self) { try sut.completeChallenge(intentId: pending.id) }
        #expect(sut.openHolds().isEmpty)
        #expect(sut.sentEvents().map(\.type) == ["payment_intent.payment_failed"])
    }

    @Test func theEventsAreTheWebhooksStripeWouldSend() async throws {
        let sut = makeSUT()
        let held = try await sut.authorize(request("pm_card_visa"))
        _ = try await sut.capture(intentId: held.id, amountMinor: 800, idempotencyKey: "cap:1")
        let other = try await sut.authorize(request("pm_card_visa", key: "hold:2"))
        _ = try await sut.cancel(intentId: other.id, idempotencyKey: "cancel:2")
        _ = try? await sut.charge(request("pm_card_chargeCustomerFail", amount: 300, key: "charge:3"))
        let failed = try #require(sut.entries().last).intent.id
        let expired = try await sut.authorize(request("pm_card_mastercard", key: "hold:4"))
        try sut.expireHold(intentId: expired.id)
        let expected: [(String, String, GatewayIntentStatus)] = [
            ("payment_intent.amount_capturable_updated", held.id, .requiresCapture),
            ("payment_intent.succeeded", held.id, .succeeded),
            ("payment_intent.amount_capturable_updated", other.id, .requiresCapture),
            ("payment_intent.canceled", other.id, .canceled),
            ("payment_intent.payment_failed", failed, .requiresPaymentMethod),
            ("payment_intent.amount_capturable_updated", expired.id, .requiresCapture),
            ("charge.expired", expired.id, .canceled), ("payment_intent.canceled", expired.id, .canceled),
        ]
        let sent = sut.sentEvents()
        #expect(sent.map(\.type) == expected.map(\.0))
        #expect(sent.map(\.intent.id) == expected.map(\.1))
        #expect(sent.map(\.intent.status) == expected.map(\.2))
        #expect(sent[1].intent.amountReceived == 800)
        #expect(Set(sent.map(\.id)).count == sent.count && sent.allSatisfy { $0.created == Self.at })
        // The stream delivers the same events, in order.
        var streamed: [GatewayEvent] = []
        for await event in sut.events {
            streamed.append(event)
            if streamed.count == sent.count { break }
        }
        #expect(streamed == sent)
    }

    @Test func aFaultBeforeApplyingIsAmbiguousAndChangesNothing() async throws {
        let sut = makeSUT()
        sut.failNext(.authorize, afterApplying: false)
        let error = await #expect(throws: PaymentGatewayError.self) { try await sut.authorize(request("pm_card_visa")) }
        guard case .ambiguous = error else {
            Issue.record("expected .ambiguous, got \(String(describing: error))"); return
        }
        #expect(sut.intents().isEmpty)
        let retried = try await sut.authorize(request("pm_card_visa"))
        #expect(retried.status == .requiresCapture && sut.intents().count == 1)
    }

    @Test func aFaultAfterApplyingIsAmbiguousButTheRetryUnderTheSameKeyFindsTheFirstHold() async throws {
        let sut = makeSUT()
        sut.failNext(.authorize, afterApplying: true)
        let error = await #expect(throws: PaymentGatewayError.self) { try await sut.authorize(request("pm_card_visa")) }
        guard case .ambiguous = error else {
            Issue.record("expected .ambiguous, got \(String(describing: error))"); return
        }
        let placed = try #require(sut.intents().first)
        #expect(placed.status == .requiresCapture)
        #expect(try await sut.authorize(request("pm_card_visa")) == placed)
        #expect(sut.intents().count == 1)

        sut.failNext(.capture, afterApplying: true)
        await #expect(throws: PaymentGatewayError.self) {
            try await sut.capture(intentId: placed.id, amountMinor: 500, idempotencyKey: "cap:1")
        }
        #expect(try await sut.retrieve(intentId: placed.id).status == .succeeded)
        #expect(
            try await sut.capture(intentId: placed.id, amountMinor: 500, idempotencyKey: "cap:1").amountReceived == 500)
    }

    @Test func aFaultOnRetrieveIsAmbiguousOnce() async throws {
        let sut = makeSUT()
        let held = try await sut.authorize(request("pm_card_visa"))
        sut.failNext(.retrieve, afterApplying: false)
        await #expect(throws: PaymentGatewayError.self) { try await sut.retrieve(intentId: held.id) }
        #expect(try await sut.retrieve(intentId: held.id) == held)
    }

    @Test func entriesKeepWhatEachIntentWasAskedFor() async throws {
        let sut = makeSUT()
        _ = try await sut.authorize(request("pm_card_visa", description: "EnRoute ride T9"))
        let entry = try #require(sut.entries().first)
        #expect(
            entry.paymentMethod == "pm_card_visa" && entry.description == "EnRoute ride T9" && !entry.offSession
                && entry.created == Self.at)
        #expect(entry.intent.currency == "eur")
    }

    /// A server runs for months on the sandbox: finished intents, keys and events are forgotten past their bound, while
    /// a hold still open is kept however old, and a key is replayed for as long as it is remembered.
    @Test func whatTheSandboxRemembersIsBoundedButOpenHoldsAreKept() async throws {
        let clock = Mutex(Self.at)
        let sut = SandboxGateway(
            baseURL: Self.base, ids: SequentialIDGenerator(prefix: ""), retention: 3, now: { clock.withLock { $0 } })
        let open = try await sut.authorize(request("pm_card_visa", key: "hold:open"))
        for i in 0..<20 {
            let held = try await sut.authorize(request("pm_card_visa", key: "hold:\(i)"))
            _ = try await sut.capture(intentId: held.id, amountMinor: 500, idempotencyKey: "cap:\(i)")
        }
        #expect(sut.rememberedIntents == 4, "the open hold and the newest three finished")
        #expect(sut.rememberedKeys == 12, "four times the retention")
        #expect(sut.sentEvents().count == 3)
        #expect(sut.openHolds().map(\.id) == [open.id])
        #expect(try await sut.retrieve(intentId: open.id).status == .requiresCapture)
        // The newest key still replays its answer; a forgotten intent is no longer found.
        let replayed = try await sut.authorize(request("pm_card_visa", key: "hold:19"))
        #expect(try await sut.retrieve(intentId: replayed.id).status == .succeeded)
        await #expect(throws: PaymentGatewayError.self) { try await sut.retrieve(intentId: "0") }
        // A day later every key has aged out, and the open hold can still be captured.
        clock.withLock { $0 = Self.at.addingTimeInterval(24 * 3600) }
        _ = try await sut.capture(intentId: open.id, amountMinor: 1_000, idempotencyKey: "cap:open")
        #expect(sut.rememberedKeys == 1)
    }
}
