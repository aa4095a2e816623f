public import Foundation
public import EnRouteDomain
import EnRouteCrypto

/// Why a webhook delivery was refused.
public enum StripeWebhookError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No `Stripe-Signature` header.
    case missingHeader
    /// The header has no `t=<unix seconds>`.
    case malformedHeader
    /// The header has no `v1=` signature (other schemes are ignored).
    case noSignature
    /// No `v1` value matches any of the endpoint's secrets.
    case badSignature
    /// Signed longer ago than the tolerance.
    case tooOld(ageSeconds: Int)
    /// Signed further in the future than the tolerance.
    case fromTheFuture(aheadSeconds: Int)
    /// Signed correctly but not an event EnRoute can read.
    case malformedBody(String)

    public var description: String {
        switch self {
        case .missingHeader: "the request has no Stripe-Signature header"
        case .malformedHeader: "the Stripe-Signature header has no t=<unix seconds> timestamp"
        case .noSignature: "the Stripe-Signature header has no v1 signature"
        case .badSignature: "no v1 signature in the Stripe-Signature header matches the endpoint's signing secrets"
        case .tooOld(let age): "the event was signed \(age) s ago, outside the tolerance"
        case .fromTheFuture(let ahead): "the event is signed \(ahead) s in the future, outside the tolerance"
        case .malformedBody(let detail): "the event body cannot be read: \(detail)"
        }
    }
}

/// Stripe's webhook signatures: `Stripe-Signature: t=…,v1=…[,v1=…]`, each `v1` the hex HMAC-SHA256 of `"{t}.{raw
/// body}"` under an endpoint secret (`whsec_…`).
public enum StripeWebhookVerifier {
    /// Stripe's own libraries' tolerance: 300 seconds either side of `now`.
    public static let defaultTolerance: TimeInterval = 300

    /// The event in `payload` once `header` proves one of `secrets` signed it within `tolerance` of `now` (0 turns the
    /// age check off). Any `v1` value may match any secret, so rotated secrets and Stripe's rotation overlap both pass.
    public static func verify(
        payload: [UInt8], header: String?, secrets: [String], now: Date,
        tolerance: TimeInterval = defaultTolerance
    ) throws(StripeWebhookError) -> GatewayEvent {
        guard let header, !header.isEmpty else { throw .missingHeader }
        var timestamp: Int?
        var signatures: [[UInt8]] = []
        for part in header.split(separator: ",") {
            let pair = part.split(separator: "=", maxSplits: 1)
            guard pair.count == 2 else { continue }
            let name = pair[0].trimmingCharacters(in: .whitespaces),
                value = pair[1].trimmingCharacters(in: .whitespaces)
            switch name {
            case "t": timestamp = Int(value)
            case "v1": signatures.append(Array(value.utf8))
            default: continue  // v0 and any later scheme
            }
        }
        guard let timestamp else { throw .malformedHeader }
        guard !signatures.isEmpty else { throw .noSignature }
        let expected = secrets.map { Array(signature(payload: payload, secret: $0, timestamp: timestamp).utf8) }
        // Every comparison runs, so the time taken says nothing about which one matched.
        var matched = false
        for candidate in signatures {
            for value in expected where Digest.constantTimeEqual(candidate, value) { matched = true }
        }
        guard matched else { throw .badSignature }
        if tolerance > 0 {
            let age = now.timeIntervalSince1970 - TimeInterval(timestamp)
            if age > tolerance { throw .tooOld(ageSeconds: Int(age)) }
            if -age > tolerance { throw .fromTheFuture(aheadSeconds: Int(-age)) }
        }
        return try event(payload)
    }

    /// The `Stripe-Signature` header value Stripe would send for `payload` signed with `secret` at `timestamp`.
    public static func sign(payload: [UInt8], secret: String, timestamp: Int) -> String {
        "t=\(timestamp),v1=\(signature(payload: payload, secret: secret, timestamp: timestamp))"
    }

    /// The hex HMAC-SHA256 of `"{timestamp}.{payload}"` under `secret`.
    static func signature(payload: [UInt8], secret: String, timestamp: Int) -> String {
        Digest.hex(Digest.hmacSHA256(key: Array(secret.utf8), message: Array("\(timestamp).".utf8) + payload))
    }

    /// The event's id, type, creation time and the PaymentIntent it concerns (`charge.*` events name theirs).
    static func event(_ payload: [UInt8]) throws(StripeWebhookError) -> GatewayEvent {
        let data = Data(payload), decoder = JSONDecoder()
        let envelope: StripeWire.Event
        do { envelope = try decoder.decode(StripeWire.Event.self, from: data) } catch {
            throw .malformedBody("not a Stripe event with id, type, created and data.object")
        }
        let created = Date(timeIntervalSince1970: TimeInterval(envelope.created))
        switch envelope.data.object.object {
        case "payment_intent":
            guard
                let wire = try? decoder.decode(StripeWire.EventObject<StripeWire.PaymentIntent>.self, from: data).data
                    .object,
                let intent = wire.intent
            else { throw .malformedBody("data.object is not a PaymentIntent EnRoute can read") }
            return GatewayEvent(id: envelope.id, type: envelope.type, intent: intent, created: created)
        case "charge":
            guard
                let charge = try? decoder.decode(StripeWire.EventObject<StripeWire.Charge>.self, from: data).data
                    .object,
                let intentId = charge.payment_intent
            else { throw .malformedBody("data.object is a charge without a payment_intent") }
            return GatewayEvent(
                id: envelope.id, type: envelope.type, intent: intent(of: charge, intentId, type: envelope.type),
                created: created)
        case let other:
            throw .malformedBody("data.object is a \(other), not a payment_intent or a charge")
        }
    }

    /// What a charge event says of its PaymentIntent: an expired or failed authorization holds nothing any more.
    static func intent(of charge: StripeWire.Charge, _ id: String, type: String) -> GatewayIntent {
        let status: GatewayIntentStatus =
            switch (type, charge.status, charge.captured ?? false) {
            case ("charge.expired", _, _): .canceled
            case (_, "failed", _): .requiresPaymentMethod
            case (_, "pending", _): .processing
            case (_, _, true): .succeeded
            default: .requiresCapture
            }
        return GatewayIntent(
            id: id, status: status, amountMinor: charge.amount,
            amountCapturable: status == .requiresCapture ? charge.amount : 0,
            amountReceived: charge.amount_captured ?? 0, currency: charge.currency.uppercased())
    }
}
