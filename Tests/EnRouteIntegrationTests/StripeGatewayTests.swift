import HTTPTransport
import CurlTransport
import EnRouteDomain
import EnRouteStripe
import Foundation
import Synchronization
import Testing
import TestSupport

/// The pauses the gateway asked for, recorded instead of slept.
final class Pauses: Sendable {
    private let log = Mutex<[Duration]>([])
    var all: [Duration] { log.withLock { $0 } }
    func sleep(_ duration: Duration) { log.withLock { $0.append(duration) } }
}

/// A Stripe that answers as the test says.
private struct SilentStripe: HTTPClient {
    let answer: @Sendable (HTTPClientRequest) throws -> HTTPClientResponse
    func send(_ request: HTTPClientRequest) async throws -> HTTPClientResponse { try answer(request) }
    func events(_ request: HTTPClientRequest) -> AsyncThrowingStream<ServerSentEvent, any Error> {
        AsyncThrowingStream { $0.finish(throwing: HTTPClientError.network("Stripe has no streams")) }
    }
}

private let returnURL = URL(string: "https://enroute.test/payments/return")!

@Suite struct StripeGatewayTests {
    struct SUT {
        let stripe: StripeStandIn
        let gateway: StripeGateway
        let pauses: Pauses
        let http: CurlHTTPClient

        /// The API requests the stand-in saw, as `METHOD path`.
        var calls: [String] { stripe.requests.map { "\($0.method) \($0.path)" } }
    }

    func makeSUT(key: String? = nil) throws -> SUT {
        let stripe = try StripeStandIn()
        let pauses = Pauses()
        let http = CurlHTTPClient(defaultTimeout: .seconds(10))
        let gateway = StripeGateway(
            configuration: StripeConfiguration(
                secretKey: key ?? stripe.apiKey, returnURL: returnURL, baseURL: stripe.baseURL),
            client: http, retry: StripeRetryPolicy(sleep: { pauses.sleep($0) }))
        return SUT(stripe: stripe, gateway: gateway, pauses: pauses, http: http)
    }

    func hold(
        _ amount: Int = 2_000, on method: String = "pm_card_visa", key: String = "hold:q_1"
    ) -> AuthorizationRequest {
        AuthorizationRequest(
            amountMinor: amount, currency: "EUR", paymentMethod: method, idempotencyKey: key,
            description: "EnRoute ride T1")
    }

    @Test func aHoldIsAManualCaptureIntentConfirmedAtOnceUnderTheKey() async throws {
        let sut = try makeSUT()
        let intent = try await sut.gateway.authorize(hold(1_250))
        #expect(intent.status == .requiresCapture)
        #expect(intent.amountMinor == 1_250 && intent.amountCapturable == 1_250 && intent.amountReceived == 0)
        #expect(intent.currency == "EUR")
        let sent = try #require(sut.stripe.requests.first)
        #expect(sent.method == "POST" && sent.path == "/v1/payment_intents")
        #expect(sent.headers["authorization"] == "Bearer \(sut.stripe.apiKey)")
        #expect(sent.headers["stripe-version"] == "2024-06-20")
        #expect(sent.headers["content-type"] == "application/x-www-form-urlencoded")
        #expect(sent.headers["idempotency-key"] == "hold:q_1")
        #expect(
            sent.form["amount"] == "1250" && sent.form["currency"] == "eur"
                && sent.form["payment_method"] == "pm_card_visa")
        #expect(sent.form["confirm"] == "true" && sent.form["capture_method"] == "manual")
        #expect(sent.form["return_url"] == returnURL.absoluteString)
        #expect(sent.form["metadata[enroute_key]"] == "hold:q_1")
        #expect(sent.form["description"] == "EnRoute ride T1")
        #expect(sut.stripe.intent(intent.id)?.metadata == ["enroute_key": "hold:q_1"])
        await sut.stripe.shutdown()
    }

    @Test func describeReadsTheCardsDisplayDetailsAndRejectsAnUnknownToken() async throws {
        let sut = try makeSUT()
        #expect(
            try await sut.gateway.describe(token: "pm_card_visa")
                == CardDetails(brand: "visa", last4: "4242", expMonth: 12, expYear: 2034))
        #expect(sut.calls == ["GET /v1/payment_methods/pm_card_visa"])
        await #expect(throws: PaymentGatewayError.rejected("No such PaymentMethod: 'pm_nope'")) {
            _ = try await sut.gateway.describe(token: "pm_nope")
        }
        await sut.stripe.shutdown()
    }

    @Test func aPartialCaptureTakesTheFinalAmountAndReleasesTheRest() async throws {
        let sut = try makeSUT()
        let held = try await sut.gateway.authorize(hold(2_000))
        let captured = try await sut.gateway.capture(
            intentId: held.id, amountMinor: 1_500, idempotencyKey: "capture:T1")
        #expect(captured.status == .succeeded && captured.amountReceived == 1_500 && captured.amountCapturable == 0)
        #expect(sut.stripe.requests.last?.form == ["amount_to_capture": "1500"])
        #expect(sut.stripe.requests.last?.headers["idempotency-key"] == "capture:T1")
        #expect(try await sut.gateway.retrieve(intentId: held.id) == captured)
        await sut.stripe.shutdown()
    }

    @Test func aCaptureAboveTheHoldIsRejected() async throws {
        let sut = try makeSUT()
        let held = try await sut.gateway.authorize(hold(2_000))
        await #expect(
            throws: PaymentGatewayError.rejected(
                "The amount to capture (2001) must be less than or equal to the PaymentIntent's "
                    + "amount_capturable (2000)."
            )
        ) {
            _ = try await sut.gateway.capture(intentId: held.id, amountMinor: 2_001, idempotencyKey: "capture:T1")
        }
        #expect(sut.stripe.intent(held.id)?.status == "requires_capture")
        await sut.stripe.shutdown()
    }

    @Test func cancellingAHoldReleasesItAndNothingCanBeCapturedAfter() async throws {
        let sut = try makeSUT()
        let held = try await sut.gateway.authorize(hold(2_000))
        let released = try await sut.gateway.cancel(intentId: held.id, idempotencyKey: "release:T1")
        #expect(released.status == .canceled && released.amountCapturable == 0 && released.amountReceived == 0)
        do {
            _ = try await sut.gateway.capture(intentId: held.id, amountMinor: 100, idempotencyKey: "capture:T1")
            Issue.record("a canceled intent was captured")
        } catch {
            guard case .rejected(let message) = error else { Issue.record("expected rejected, got \(error)"); return }
            #expect(message.contains("status of canceled"))
        }
        await sut.stripe.shutdown()
    }

    @Test(arguments: [
        ("pm_card_visa_chargeDeclined", "card_declined", "generic_decline", "Your card was declined."),
        (
            "pm_card_visa_chargeDeclinedInsufficientFunds", "card_declined", "insufficient_funds",
            "Your card has insufficient funds."
        ),
    ])
    func aDeclineIsStripes402WithItsDeclineCodeAndTheIntentItLeft(
        method: String, code: String, declineCode: String, message: String
    ) async throws {
        let sut = try makeSUT()
        do {
            _ = try await sut.gateway.authorize(hold(on: method))
            Issue.record("\(method) was held")
        } catch {
            guard case .declined(let decline, let intent) = error else {
                Issue.record("expected declined, got \(error)"); return
            }
            #expect(decline == GatewayDecline(code: code, declineCode: declineCode, message: message))
            #expect(intent?.status == .requiresPaymentMethod)
            #expect(intent?.id == sut.stripe.intents.first?.id)
            #expect(intent?.lastError == decline)
        }
        await sut.stripe.shutdown()
    }

    /// A replay of a declined hold gets the same 402 (Stripe saves it), and no second intent.
    @Test func aDeclinedHoldReplayedUnderItsKeyIsTheSameDecline() async throws {
        let sut = try makeSUT()
        let first = await #expect(throws: PaymentGatewayError.self) {
            _ = try await sut.gateway.authorize(hold(on: "pm_card_visa_chargeDeclined"))
        }
        let again = await #expect(throws: PaymentGatewayError.self) {
            _ = try await sut.gateway.authorize(hold(on: "pm_card_visa_chargeDeclined"))
        }
        #expect(first == again)
        #expect(sut.stripe.intents.count == 1)
        await sut.stripe.shutdown()
    }

    @Test func aBankChallengeGivesItsURLAndOnceAnsweredTheHoldCanBeCaptured() async throws {
        let sut = try makeSUT()
        let pending = try await sut.gateway.authorize(hold(2_000, on: "pm_card_authenticationRequired"))
        #expect(pending.status == .requiresAction && pending.amountCapturable == 0)
        let url = try #require(pending.actionURL)
        #expect(url == sut.stripe.challengeURL(for: pending.id))
        #expect(try await sut.http.send(HTTPClientRequest(url: url)).status == 200)  // the customer answers the bank
        let held = try await sut.gateway.retrieve(intentId: pending.id)
        #expect(held.status == .requiresCapture && held.amountCapturable == 2_000 && held.actionURL == nil)
        let captured = try await sut.gateway.capture(
            intentId: pending.id, amountMinor: 2_000, idempotencyKey: "capture:T1")
        #expect(captured.status == .succeeded && captured.amountReceived == 2_000)
        await sut.stripe.shutdown()
    }

    @Test func theSameKeyTwiceIsOneIntent() async throws {
        let sut = try makeSUT()
        let first = try await sut.gateway.authorize(hold())
        let second = try await sut.gateway.authorize(hold())
        #expect(first == second)
        #expect(sut.stripe.intents.count == 1)
        await sut.stripe.shutdown()
    }

    @Test func theSameKeyWithOtherParametersIsRejected() async throws {
        let sut = try makeSUT()
        _ = try await sut.gateway.authorize(hold(2_000))
        do {
            _ = try await sut.gateway.authorize(hold(2_500))
            Issue.record("a second amount under one key was accepted")
        } catch {
            guard case .rejected(let message) = error else { Issue.record("expected rejected, got \(error)"); return }
            #expect(message.hasPrefix("Keys for idempotent requests can only be used with the same parameters"))
        }
        #expect(sut.stripe.intents.count == 1)
        await sut.stripe.shutdown()
    }

    /// Stripe creates the hold but its answer is a 500: the gateway searches by the key, finds it, and creates no
    /// second one.
    @Test func aCreateWhoseAnswerWasLostIsFoundBySearchNotMadeTwice() async throws {
        let sut = try makeSUT()
        sut.stripe.failNext(1, status: 500, afterApplying: true)
        let intent = try await sut.gateway.authorize(hold(2_000))
        #expect(intent.status == .requiresCapture && intent.amountCapturable == 2_000)
        #expect(sut.stripe.intents.map(\.id) == [intent.id])
        #expect(sut.calls == ["POST /v1/payment_intents", "GET /v1/payment_intents/search"])
        #expect(sut.stripe.requests.last?.query["query"] == "metadata['enroute_key']:'hold:q_1'")
        #expect(sut.pauses.all == [.milliseconds(500)])
        await sut.stripe.shutdown()
    }

    /// A 429 is not saved and nothing was created: the search finds nothing and the create goes again under the same
    /// key.
    @Test func aCreateThatDidNotHappenIsSentAgainUnderTheSameKey() async throws {
        let sut = try makeSUT()
        sut.stripe.failNext(1, status: 429)
        let intent = try await sut.gateway.authorize(hold(2_000))
        #expect(intent.status == .requiresCapture)
        #expect(sut.stripe.intents.count == 1)
        #expect(
            sut.calls == ["POST /v1/payment_intents", "GET /v1/payment_intents/search", "POST /v1/payment_intents"])
        #expect(
            sut.stripe.requests.filter { $0.method == "POST" }.map { $0.headers["idempotency-key"] } == [
                "hold:q_1", "hold:q_1",
            ])
        await sut.stripe.shutdown()
    }

    /// Stripe saved a 500 for a create that did nothing: its replays are not taken as an answer, no create goes under
    /// another key, and after the retries the outcome stays ambiguous.
    @Test func aReplayedErrorForACreateIsNotTakenAsTheAnswer() async throws {
        let sut = try makeSUT()
        sut.stripe.failNext(1, status: 500)
        do {
            _ = try await sut.gateway.authorize(hold(2_000))
            Issue.record("a create Stripe never made was reported as made")
        } catch {
            guard case .ambiguous(let detail) = error else { Issue.record("expected ambiguous, got \(error)"); return }
            #expect(detail.hasSuffix("(still unknown after 3 attempts)"))
        }
        #expect(sut.stripe.intents.isEmpty)
        #expect(
            Set(sut.stripe.requests.filter { $0.method == "POST" }.map { $0.headers["idempotency-key"] }) == [
                "hold:q_1"
            ])
        #expect(sut.calls.filter { $0 == "GET /v1/payment_intents/search" }.count == 2)
        #expect(sut.pauses.all == [.milliseconds(500), .seconds(2)])
        await sut.stripe.shutdown()
    }

    @Test func aCaptureWhoseAnswerWasLostIsFoundCapturedByRetrievingTheIntent() async throws {
        let sut = try makeSUT()
        let held = try await sut.gateway.authorize(hold(2_000))
        sut.stripe.failNext(1, status: 502, afterApplying: true)
        let captured = try await sut.gateway.capture(intentId: held.id, amountMinor: 800, idempotencyKey: "capture:T1")
        #expect(captured.status == .succeeded && captured.amountReceived == 800)
        #expect(
            sut.calls.dropFirst() == [
                "POST /v1/payment_intents/\(held.id)/capture", "GET /v1/payment_intents/\(held.id)",
            ])
        await sut.stripe.shutdown()
    }

    /// Stripe saved a 500 for a capture that did not happen: the intent says it is still held, the same key only
    /// replays
    /// the 500, so the capture goes again under a key of its own (the intent's state refuses a second capture anyway).
    @Test func aCaptureWhoseSavedErrorIsReplayedIsRetriedUnderAKeyOfItsOwn() async throws {
        let sut = try makeSUT()
        let held = try await sut.gateway.authorize(hold(2_000))
        sut.stripe.failNext(1, status: 500)
        let captured = try await sut.gateway.capture(intentId: held.id, amountMinor: 800, idempotencyKey: "capture:T1")
        #expect(captured.status == .succeeded && captured.amountReceived == 800)
        let captures = sut.stripe.requests.filter { $0.path.hasSuffix("/capture") }
        #expect(captures.map { $0.headers["idempotency-key"] } == ["capture:T1", "capture:T1", "capture:T1/retry-2"])
        #expect(sut.calls.filter { $0 == "GET /v1/payment_intents/\(held.id)" }.count == 2)
        await sut.stripe.shutdown()
    }

    @Test func aCancelWhoseAnswerWasLostIsFoundCanceled() async throws {
        let sut = try makeSUT()
        let held = try await sut.gateway.authorize(hold(2_000))
        sut.stripe.failNext(1, status: 500, afterApplying: true)
        let released = try await sut.gateway.cancel(intentId: held.id, idempotencyKey: "release:T1")
        #expect(released.status == .canceled)
        #expect(sut.calls.filter { $0.hasSuffix("/cancel") }.count == 1)
        await sut.stripe.shutdown()
    }

    @Test func aReadThatKeepsFailingIsAmbiguousAfterTheBoundedRetries() async throws {
        let sut = try makeSUT()
        let held = try await sut.gateway.authorize(hold())
        sut.stripe.failNext(5, status: 503)
        await #expect(
            throws: PaymentGatewayError.ambiguous(
                "Stripe answered 503 to GET /v1/payment_intents/\(held.id): An error occurred with our API (injected "
                    + "by the stand-in)."
            )
        ) {
            _ = try await sut.gateway.retrieve(intentId: held.id)
        }
        #expect(sut.calls.count == 1 + 3)
        #expect(sut.pauses.all == [.milliseconds(500), .seconds(2)])
        await sut.stripe.shutdown()
    }

    @Test func anOffSessionChargeOnChargeCustomerFailDeclinesAfterItsHoldWorked() async throws {
        let sut = try makeSUT()
        let held = try await sut.gateway.authorize(hold(2_000, on: "pm_card_chargeCustomerFail"))
        #expect(held.status == .requiresCapture)
        let difference = AuthorizationRequest(
            amountMinor: 300, currency: "EUR", paymentMethod: "pm_card_chargeCustomerFail", customer: "cus_1",
            idempotencyKey: "difference:T1", description: "EnRoute ride T1, the rest")
        do {
            _ = try await sut.gateway.charge(difference)
            Issue.record("the off-session charge went through")
        } catch {
            guard case .declined(let decline, let intent) = error else {
                Issue.record("expected declined, got \(error)"); return
            }
            #expect(decline.code == "card_declined" && decline.declineCode == "generic_decline")
            #expect(intent?.status == .requiresPaymentMethod)
        }
        let sent = try #require(sut.stripe.requests.last)
        #expect(
            sent.form["off_session"] == "true" && sent.form["confirm"] == "true" && sent.form["customer"] == "cus_1")
        #expect(sent.form["capture_method"] == nil)
        await sut.stripe.shutdown()
    }

    @Test func anOffSessionChargeOnAGoodCardIsTakenAtOnce() async throws {
        let sut = try makeSUT()
        let charged = try await sut.gateway.charge(hold(300, key: "difference:T1"))
        #expect(charged.status == .succeeded && charged.amountReceived == 300 && charged.amountCapturable == 0)
        await sut.stripe.shutdown()
    }

    @Test func anOffSessionChargeNeedingAuthenticationDeclines() async throws {
        let sut = try makeSUT()
        do {
            _ = try await sut.gateway.charge(hold(300, on: "pm_card_authenticationRequired"))
            Issue.record("an off-session charge needing authentication went through")
        } catch {
            guard case .declined(let decline, _) = error else {
                Issue.record("expected declined, got \(error)"); return
            }
            #expect(decline.code == "authentication_required" && decline.declineCode == "authentication_required")
        }
        await sut.stripe.shutdown()
    }

    @Test func aWrongAPIKeyIsRejectedWithoutRetries() async throws {
        let sut = try makeSUT(key: "sk_test_wrong")
        do {
            _ = try await sut.gateway.authorize(hold())
            Issue.record("a wrong key was accepted")
        } catch {
            guard case .rejected(let message) = error else { Issue.record("expected rejected, got \(error)"); return }
            #expect(
                message == "Stripe refused the API key for POST /v1/payment_intents: Invalid API Key provided: ****rong"
            )
        }
        #expect(sut.stripe.requests.count == 1 && sut.stripe.intents.isEmpty)
        await sut.stripe.shutdown()
    }

    @Test func aTimeoutIsAmbiguousAndTheReadIsRetried() async throws {
        let calls = Mutex(0)
        let pauses = Pauses()
        let gateway = StripeGateway(
            configuration: StripeConfiguration(secretKey: "sk_test_x", returnURL: returnURL, timeout: .seconds(7)),
            client: SilentStripe { request in
                #expect(request.timeout == .seconds(7))
                calls.withLock { $0 += 1 }
                throw HTTPClientError.timedOut
            }, retry: StripeRetryPolicy(sleep: { pauses.sleep($0) }))
        await #expect(
            throws: PaymentGatewayError.ambiguous(
                "Stripe did not answer GET /v1/payment_intents/pi_1 within 7.0 seconds")
        ) {
            _ = try await gateway.retrieve(intentId: "pi_1")
        }
        #expect(calls.withLock { $0 } == 3)
    }

    @Test func aStripeThatCannotBeReachedIsAmbiguous() async throws {
        let gone = try StripeStandIn()
        let address = gone.baseURL
        await gone.shutdown()
        let pauses = Pauses()
        let gateway = StripeGateway(
            configuration: StripeConfiguration(secretKey: "sk_test_x", returnURL: returnURL, baseURL: address),
            client: CurlHTTPClient(defaultTimeout: .seconds(5)),
            retry: StripeRetryPolicy(retries: 1, sleep: { pauses.sleep($0) }))
        do {
            _ = try await gateway.retrieve(intentId: "pi_1")
            Issue.record("an unreachable Stripe answered")
        } catch {
            guard case .ambiguous(let detail) = error else { Issue.record("expected ambiguous, got \(error)"); return }
            #expect(detail.hasPrefix("Stripe could not be reached for GET /v1/payment_intents/pi_1"))
        }
        #expect(pauses.all == [.milliseconds(500)])
    }
}
