import Foundation
import Testing
import EnRouteModels
import EnRouteDomain
import EnRouteStripe
import TestSupport
import CurlTransport

/// Stripe's webhook through the API: verified over the raw body, acknowledged at once, applied by the payment worker
/// once.
@Suite struct PaymentWebhookTests {
    static let secret = "whsec_enroute_test"

    static func backend() -> TestBackend {
        let clock = ManualClock()
        return TestBackend(
            clock: clock,
            paymentWebhook: { body, header in
                try StripeWebhookVerifier.verify(payload: body, header: header, secrets: [secret], now: clock.date)
            })
    }

    /// A `payment_intent.succeeded` event for `intent` as Stripe sends it.
    static func event(_ id: String, intent: String, amount: Int, created: Date) -> String {
        #"{"id":"\#(id)","object":"event","type":"payment_intent.succeeded","#
            + #""created":\#(Int(created.timeIntervalSince1970)),"data":{"object":{"id":"\#(intent)","#
            + #""object":"payment_intent","status":"succeeded","amount":\#(amount),"amount_capturable":0,"#
            + #""amount_received":\#(amount),"currency":"eur","capture_method":"manual"}}}"#
    }

    static func post(_ backend: TestBackend, _ body: String, signedAt: Date, secret: String = secret) async -> Int {
        let header = StripeWebhookVerifier.sign(
            payload: Array(body.utf8), secret: secret, timestamp: Int(signedAt.timeIntervalSince1970))
        return await backend.call(
            "POST", APIPath.Template.stripeWebhook, token: nil, json: body, headers: ["Stripe-Signature": header]
        ).status
    }

    @Test func aSignedSucceededEventMarksTheTripPaidOnceAndBadOrStaleSignaturesAreRefused() async throws {
        let backend = Self.backend()
        let created = await backend.call(
            "POST", APIPath.trips, token: backend.token("c1", .customer),
            json: try await backend.rideBody("c1", pickup: TestBackend.pickup, dropoff: TestBackend.dropoff),
            headers: ["Idempotency-Key": UUID().uuidString])
        let trip = try WireCoding.decoder().decode(Trip.self, from: Data(created.body))
        try await MoneyFlow.drive(backend, trip.id)
        let settled = try #require(try backend.service.cached(trip.id))
        let intent = try #require(settled.payment?.intentId)
        #expect(settled.payment?.paidAt == nil)

        let body = Self.event(
            "evt_paid_1", intent: intent, amount: settled.payment!.capturedMinor, created: backend.clock.date)
        #expect(await Self.post(backend, body, signedAt: backend.clock.date, secret: "whsec_someone_else") == 400)
        #expect(
            await Self.post(backend, body, signedAt: backend.clock.date.addingTimeInterval(-301)) == 400,
            "older than the tolerance")
        let header = StripeWebhookVerifier.sign(
            payload: Array(body.utf8), secret: Self.secret, timestamp: Int(backend.clock.date.timeIntervalSince1970))
        let reformatted = await backend.call(
            "POST", APIPath.Template.stripeWebhook, token: nil, json: body.replacingOccurrences(of: ",", with: ", "),
            headers: ["Stripe-Signature": header])
        #expect(reformatted.status == 400, "the signature covers the raw bytes")
        #expect(await Self.post(backend, body, signedAt: backend.clock.date) == 200)
        #expect(
            try backend.service.cached(trip.id)?.payment?.paidAt == nil, "acknowledged first, applied by the worker")
        try await backend.settlePayments()
        let paid = try #require(try backend.service.cached(trip.id))
        #expect(paid.payment?.paidAt != nil)
        #expect(paid.version == settled.version + 1, "a version the customer sees")

        // The same event again (Stripe retries deliveries) changes nothing.
        #expect(await Self.post(backend, body, signedAt: backend.clock.date) == 200)
        try await backend.settlePayments()
        #expect(try backend.service.cached(trip.id)?.version == paid.version)
    }

    /// A callback the worker would ignore (a hold placed, a payment refused) repeats the gateway's own answer: not
    /// queued.
    @Test func onlyCallbacksTheWorkerActsOnAreQueued() async throws {
        let backend = TestBackend()
        let intent = GatewayIntent(
            id: "pi_1", status: .requiresCapture, amountMinor: 1200, amountCapturable: 1200, currency: "eur")
        func event(_ type: String) -> PaymentJob {
            .event(GatewayEvent(id: "evt_" + type, type: type, intent: intent, created: backend.clock.date))
        }
        for ignored in [
            "payment_intent.amount_capturable_updated", "payment_intent.payment_failed", "payment_intent.created",
        ] {
            #expect(try await backend.service.enqueuePaymentJob(event(ignored)) == false, "\(ignored)")
        }
        for applied in TripService.appliedPaymentEvents.sorted() {
            #expect(try await backend.service.enqueuePaymentJob(event(applied)), "\(applied)")
        }
        let due = try await backend.store.dueOutbox(topic: PaymentJob.topic, now: backend.clock.date, limit: 10)
        #expect(due.map(\.id).sorted() == TripService.appliedPaymentEvents.sorted().map { "event:evt_" + $0 })
    }

    @Test func withoutAWebhookSecretTheRouteIsNotThere() async throws {
        let backend = TestBackend()
        #expect(await backend.call("POST", APIPath.Template.stripeWebhook, token: nil, json: "{}").status == 404)
    }
}

/// The backend on Stripe's API (the stand-in over a real socket) rather than the sandbox: the same ride, the same
/// money.
@Suite(.serialized) struct StripeBackendTests {
    @Test func aWholeRideOnStripeHoldsTheQuoteCapturesItAndLeavesNothingHeld() async throws {
        let stripe = try StripeStandIn()
        let gateway = StripeGateway(
            configuration: StripeConfiguration(
                secretKey: stripe.apiKey, returnURL: URL(string: "https://enroute.test/return")!,
                baseURL: stripe.baseURL),
            client: CurlHTTPClient(), retry: StripeRetryPolicy(sleep: { _ in }))
        let backend = TestBackend(payments: gateway)
        let created = await backend.call(
            "POST", APIPath.trips, token: backend.token("c1", .customer),
            json: try await backend.rideBody("c1", pickup: TestBackend.pickup, dropoff: TestBackend.dropoff),
            headers: ["Idempotency-Key": UUID().uuidString])
        #expect(created.status == 201)
        let trip = try WireCoding.decoder().decode(Trip.self, from: Data(created.body))
        #expect(stripe.intents.map(\.status) == ["requires_capture"])
        #expect(stripe.intents.first?.amountCapturable == trip.fare?.amountMinor)
        try await MoneyFlow.drive(backend, trip.id)
        #expect(stripe.intents.map(\.status) == ["succeeded"])
        #expect(stripe.intents.first?.amountReceived == trip.fare?.amountMinor)
        #expect(try backend.service.cached(trip.id)?.payment?.state == .captured)
        // Every money-moving call carried a key derived from what it is for.
        let keys = stripe.requests.filter { $0.method == "POST" }.compactMap { $0.headers["idempotency-key"] }
        #expect(keys.contains { $0.hasPrefix("hold:") } && keys.contains("capture:\(trip.id)"))
        await stripe.shutdown()
    }
}
