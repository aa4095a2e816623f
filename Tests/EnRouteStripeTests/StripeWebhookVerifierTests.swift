import EnRouteDomain
import EnRouteStripe
import Foundation
import Testing
import TestSupport

private let secret = "whsec_enroute"
private let signedAt = 1_800_000_000
private let now = Date(timeIntervalSince1970: TimeInterval(signedAt))
private let succeeded = Array(
    (#"{"id":"evt_1","object":"event","created":1799999990,"type":"payment_intent.succeeded","#
        + #""data":{"object":{"id":"pi_1","object":"payment_intent","amount":2000,"amount_capturable":0,"#
        + #""amount_received":1500,"currency":"eur","status":"succeeded","next_action":null,"#
        + #""last_payment_error":null}}}"#).utf8)

@Suite struct StripeWebhookVerifierTests {
    func verify(
        _ payload: [UInt8] = succeeded, header: String?, secrets: [String] = [secret], at date: Date = now
    ) throws(StripeWebhookError) -> GatewayEvent {
        try StripeWebhookVerifier.verify(payload: payload, header: header, secrets: secrets, now: date)
    }

    func header(_ payload: [UInt8] = succeeded, secret: String = secret, at timestamp: Int = signedAt) -> String {
        StripeWebhookVerifier.sign(payload: payload, secret: secret, timestamp: timestamp)
    }

    /// Stripe's documented worked check, computed with Python's hmac.
    @Test func theSignatureIsProtocolsWorkedExample() {
        #expect(
            StripeWebhookVerifier.sign(
                payload: Array(#"{"id":"evt_1"}"#.utf8), secret: "whsec_test", timestamp: 1_700_000_000)
                == "t=1700000000,v1=c89214b5b5da833daed6f0b8c5bb6bd58cea9022bd80ccc78230f3942d632925")
    }

    /// The stand-in signs with its own HMAC code; the verifier must accept what it sends.
    @Test func theStandInsSignatureMatchesTheVerifiers() {
        #expect(StripeStandIn.signature(payload: succeeded, secret: secret, timestamp: signedAt) == header())
    }

    @Test func aGoodSignatureGivesTheEventAndItsIntent() throws {
        let event = try verify(header: header())
        #expect(event.id == "evt_1" && event.type == "payment_intent.succeeded")
        #expect(event.created == Date(timeIntervalSince1970: 1_799_999_990))
        #expect(
            event.intent
                == GatewayIntent(
                    id: "pi_1", status: .succeeded, amountMinor: 2_000, amountCapturable: 0, amountReceived: 1_500,
                    currency: "EUR"))
    }

    @Test func aChangedBodyIsABadSignature() {
        var tampered = succeeded
        tampered[tampered.firstIndex(of: UInt8(ascii: "5"))!] = UInt8(ascii: "9")
        #expect(throws: StripeWebhookError.badSignature) { try verify(tampered, header: header()) }
    }

    @Test func anotherSecretsSignatureIsABadSignature() {
        #expect(throws: StripeWebhookError.badSignature) { try verify(header: header(secret: "whsec_other")) }
    }

    @Test func anEventSignedLongerAgoThanTheToleranceIsTooOld() throws {
        #expect(throws: StripeWebhookError.tooOld(ageSeconds: 301)) {
            try verify(header: header(), at: now.addingTimeInterval(301))
        }
        _ = try verify(header: header(), at: now.addingTimeInterval(300))
    }

    @Test func anEventSignedFurtherAheadThanTheToleranceIsFromTheFuture() throws {
        #expect(throws: StripeWebhookError.fromTheFuture(aheadSeconds: 301)) {
            try verify(header: header(), at: now.addingTimeInterval(-301))
        }
        _ = try verify(header: header(), at: now.addingTimeInterval(-300))
    }

    @Test func aZeroToleranceTurnsTheAgeCheckOff() throws {
        _ = try StripeWebhookVerifier.verify(
            payload: succeeded, header: header(), secrets: [secret], now: now.addingTimeInterval(86_400), tolerance: 0)
    }

    @Test func eitherOfTwoSecretsIsAcceptedDuringRotation() throws {
        _ = try verify(header: header(secret: "whsec_new"), secrets: ["whsec_old", "whsec_new"])
        _ = try verify(header: header(secret: "whsec_old"), secrets: ["whsec_old", "whsec_new"])
    }

    @Test func anyOfSeveralV1ValuesMayMatch() throws {
        let good = header().split(separator: ",")[1]
        _ = try verify(header: "t=\(signedAt),v1=\(String(repeating: "0", count: 64)),\(good)")
    }

    @Test func otherSchemesAreIgnored() {
        let value = header().split(separator: "=").last!
        #expect(throws: StripeWebhookError.noSignature) { try verify(header: "t=\(signedAt),v0=\(value)") }
        #expect(throws: StripeWebhookError.badSignature) { try verify(header: "t=\(signedAt),v0=\(value),v1=abc") }
    }

    @Test(arguments: [
        (String?.none, StripeWebhookError.missingHeader),
        ("", .missingHeader),
        ("garbage", .malformedHeader),
        ("v1=abc", .malformedHeader),
        ("t=soon,v1=abc", .malformedHeader),
        ("t=1800000000", .noSignature),
    ])
    func aMalformedHeaderSaysWhatIsMissing(value: String?, error: StripeWebhookError) {
        #expect(throws: error) { try verify(header: value) }
    }

    @Test func aSignedBodyThatIsNotAnEventIsMalformed() {
        let body = Array("not json".utf8)
        #expect(throws: StripeWebhookError.malformedBody("not a Stripe event with id, type, created and data.object")) {
            try verify(body, header: header(body))
        }
        let customer = Array(
            (#"{"id":"evt_2","type":"customer.created","created":1,"data":{"object":{"object":"customer","#
                + #""id":"cus_1"}}}"#).utf8)
        #expect(throws: StripeWebhookError.malformedBody("data.object is a customer, not a payment_intent or a charge"))
        {
            try verify(customer, header: header(customer))
        }
    }

    @Test func anExpiredChargeSaysItsIntentHoldsNothing() throws {
        let expired = Array(
            (#"{"id":"evt_3","type":"charge.expired","created":1799999000,"data":{"object":{"id":"ch_1","#
                + #""object":"charge","payment_intent":"pi_7","amount":2000,"amount_captured":0,"captured":false,"#
                + #""status":"succeeded","currency":"eur"}}}"#).utf8)
        let event = try verify(expired, header: header(expired))
        #expect(event.type == "charge.expired")
        #expect(event.intent == GatewayIntent(id: "pi_7", status: .canceled, amountMinor: 2_000, currency: "EUR"))
    }
}
