import HTTPTransport
import CurlTransport
import EnRouteDomain
import EnRouteStripe
import Foundation
import HTTPEngine
import Synchronization
import Testing
import TestSupport

/// The stand-in's own contract on the wire, as raw requests: what the gateway's tests rely on it to do like Stripe.
@Suite struct StripeStandInTests {
    let http = CurlHTTPClient(defaultTimeout: .seconds(10))

    func post(
        _ stripe: StripeStandIn, _ path: String, _ form: String, key: String? = nil, auth: String? = nil
    ) async throws -> HTTPClientResponse {
        var headers = [
            "Authorization": auth ?? "Bearer \(stripe.apiKey)", "Content-Type": "application/x-www-form-urlencoded",
        ]
        if let key { headers["Idempotency-Key"] = key }
        return try await http.send(
            HTTPClientRequest(
                method: "POST", url: stripe.baseURL.appending(path: path), headers: headers, body: Data(form.utf8)))
    }

    func json(_ response: HTTPClientResponse) throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: response.body) as? [String: Any])
    }

    @Test func aRequestWithoutTheKeyIs401() async throws {
        let stripe = try StripeStandIn()
        let response = try await post(
            stripe, "v1/payment_intents", "amount=100&currency=eur", auth: "Bearer sk_test_nope")
        #expect(response.status == 401)
        #expect((try json(response)["error"] as? [String: Any])?["type"] as? String == "invalid_request_error")
        await stripe.shutdown()
    }

    @Test func aDeclineIsA402CardErrorCarryingTheIntent() async throws {
        let stripe = try StripeStandIn()
        let response = try await post(
            stripe, "v1/payment_intents",
            "amount=100&currency=eur&payment_method=pm_card_visa_chargeDeclinedInsufficientFunds&confirm=true&"
                + "capture_method=manual"
        )
        #expect(response.status == 402)
        let error = try #require(try json(response)["error"] as? [String: Any])
        #expect(error["type"] as? String == "card_error" && error["code"] as? String == "card_declined")
        #expect(error["decline_code"] as? String == "insufficient_funds")
        let intent = try #require(error["payment_intent"] as? [String: Any])
        #expect(intent["status"] as? String == "requires_payment_method")
        #expect((intent["last_payment_error"] as? [String: Any])?["decline_code"] as? String == "insufficient_funds")
        await stripe.shutdown()
    }

    @Test func aRepeatedKeyReplaysTheSavedAnswerAndSaysSo() async throws {
        let stripe = try StripeStandIn()
        let form =
            "amount=100&currency=eur&payment_method=pm_card_visa&confirm=true&capture_method=manual&"
            + "metadata[enroute_key]=a%20b%2Bc"
        let first = try await post(stripe, "v1/payment_intents", form, key: "k1")
        let second = try await post(stripe, "v1/payment_intents", form, key: "k1")
        #expect(first.status == 200 && second.body == first.body)
        #expect(first.header("Idempotent-Replayed") == nil && second.header("Idempotent-Replayed") == "true")
        #expect(stripe.intents.count == 1)
        #expect(stripe.intents.first?.metadata == ["enroute_key": "a b+c"])
        let other = try await post(
            stripe, "v1/payment_intents", form.replacingOccurrences(of: "amount=100", with: "amount=101"), key: "k1")
        #expect(other.status == 400)
        #expect((try json(other)["error"] as? [String: Any])?["type"] as? String == "idempotency_error")
        await stripe.shutdown()
    }

    @Test func aFailedValidationIsNotSavedUnderTheKey() async throws {
        let stripe = try StripeStandIn()
        #expect(try await post(stripe, "v1/payment_intents", "currency=eur", key: "k1").status == 400)
        #expect(try await post(stripe, "v1/payment_intents", "amount=100&currency=eur", key: "k1").status == 200)
        await stripe.shutdown()
    }

    @Test func anInjectedFaultAfterApplyingTakesEffectAndItsErrorIsReplayed() async throws {
        let stripe = try StripeStandIn()
        stripe.failNext(1, status: 500, afterApplying: true)
        let form = "amount=100&currency=eur&payment_method=pm_card_visa&confirm=true"
        #expect(try await post(stripe, "v1/payment_intents", form, key: "k1").status == 500)
        #expect(stripe.intents.map(\.status) == ["succeeded"])
        let replay = try await post(stripe, "v1/payment_intents", form, key: "k1")
        #expect(replay.status == 500 && replay.header("Idempotent-Replayed") == "true")
        #expect(stripe.intents.count == 1)
        await stripe.shutdown()
    }

    /// The event the stand-in posts verifies with EnRoute's verifier, at a real endpoint.
    @Test func aDeliveredEventVerifiesAtTheEndpoint() async throws {
        let stripe = try StripeStandIn()
        let gateway = StripeGateway(
            configuration: StripeConfiguration(
                secretKey: stripe.apiKey, returnURL: URL(string: "https://enroute.test/r")!,
                baseURL: stripe.baseURL),
            client: http, retry: StripeRetryPolicy(retries: 0, sleep: { _ in }))
        let held = try await gateway.authorize(
            AuthorizationRequest(
                amountMinor: 900, currency: "EUR", paymentMethod: "pm_card_visa",
                idempotencyKey: "hold:q_9", description: "EnRoute ride T9"))
        _ = try await gateway.capture(intentId: held.id, amountMinor: 700, idempotencyKey: "capture:T9")
        let received = Mutex<[GatewayEvent]>([])
        var router = Router()
        // Synchronous, so a busy cooperative pool cannot hold the answer past the client's timeout.
        router.add(
            "POST", "/v1/payments/webhooks/stripe",
            .sync { request in
                do {
                    let event = try StripeWebhookVerifier.verify(
                        payload: request.body, header: request.headers["Stripe-Signature"], secrets: ["whsec_9"],
                        now: Date(timeIntervalSince1970: 1_800_000_010))
                    received.withLock { $0.append(event) }
                    return .empty(200)
                } catch {
                    return .text("\(error)", status: 400)
                }
            })
        var config = HTTPServerConfiguration()
        config.port = 0
        let endpoint = HTTPServer(router: router, configuration: config)
        try endpoint.start()
        let url = URL(string: "http://127.0.0.1:\(endpoint.port)/v1/payments/webhooks/stripe")!
        let answer = try await stripe.deliver(
            type: "payment_intent.succeeded", intentId: held.id, eventId: "evt_9", to: url, secret: "whsec_9",
            timestamp: 1_800_000_000, client: http)
        #expect(answer.status == 200)
        let event = try #require(received.withLock { $0.first })
        #expect(event.id == "evt_9" && event.type == "payment_intent.succeeded")
        #expect(event.intent.id == held.id && event.intent.status == .succeeded && event.intent.amountReceived == 700)
        let forged = try await stripe.deliver(
            type: "payment_intent.succeeded", intentId: held.id, eventId: "evt_10", to: url, secret: "whsec_other",
            timestamp: 1_800_000_000, client: http)
        #expect(forged.status == 400)
        await endpoint.shutdown()
        await stripe.shutdown()
    }
}
