public import Foundation
public import HTTPTransport
import EnRouteCrypto
import HTTPEngine
import Synchronization

/// What each PaymentIntent call does to the stand-in's state: create, confirm, capture, cancel, and the bank's
/// challenge.
extension StripeBook {
    static func create(_ s: inout StripeState, _ form: [String: String]) -> StripeAnswer {
        guard let amountText = form["amount"] else {
            return invalid("Missing required param: amount.", param: "amount", code: "parameter_missing")
        }
        guard let amount = Int(amountText), amount > 0 else {
            return invalid("Invalid positive integer", param: "amount")
        }
        guard let currency = form["currency"], currency.count == 3 else {
            return invalid("Missing required param: currency.", param: "currency", code: "parameter_missing")
        }
        let captureMethod = form["capture_method"] ?? "automatic"
        guard ["automatic", "automatic_async", "manual"].contains(captureMethod) else {
            return invalid("Invalid capture_method", param: "capture_method")
        }
        if let method = form["payment_method"], stripeTestCards[method] == nil {
            return error(
                400, type: "invalid_request_error", code: "resource_missing",
                message: "No such PaymentMethod: '\(method)'",
                param: "payment_method", saved: false)
        }
        var metadata: [String: String] = [:]
        for (key, value) in form where key.hasPrefix("metadata[") && key.hasSuffix("]") {
            metadata[String(key.dropFirst("metadata[".count).dropLast())] = value
        }
        let id = "pi_standin_\(s.order.count + 1)"
        var intent = StripeIntent(
            id: id, amount: amount, currency: currency.lowercased(), captureMethod: captureMethod,
            created: Int(s.now().timeIntervalSince1970),
            status: form["payment_method"] == nil ? "requires_payment_method" : "requires_confirmation",
            paymentMethod: form["payment_method"], customer: form["customer"], description: form["description"],
            metadata: metadata)
        let answer = form["confirm"] == "true" ? confirm(&intent, form, s.baseURL) : ok(intent)
        s.intents[id] = intent
        s.order.append(id)
        return answer
    }

    /// Runs `body` on the intent named in the path, or answers 404.
    static func onIntent(
        _ s: inout StripeState, _ request: HTTPRequest, _ body: (inout StripeIntent) -> StripeAnswer
    ) -> StripeAnswer {
        let id = request.pathParameters["id"] ?? ""
        guard var intent = s.intents[id] else {
            return error(
                404, type: "invalid_request_error", code: "resource_missing",
                message: "No such payment_intent: '\(id)'", param: "intent", saved: false)
        }
        let answer = body(&intent)
        s.intents[id] = intent
        return answer
    }

    /// `done` is the action's past participle ("captured").
    static func unexpectedState(_ intent: StripeIntent, _ done: String, _ allowed: [String]) -> StripeAnswer {
        error(
            400, type: "invalid_request_error", code: "payment_intent_unexpected_state",
            message:
                "This PaymentIntent could not be \(done) because it has a status of \(intent.status). Only a "
                + "PaymentIntent with one of the following statuses may be \(done): "
                + "\(allowed.joined(separator: ", "))."
        )
    }

    static func confirm(_ intent: inout StripeIntent, _ form: [String: String], _ base: URL) -> StripeAnswer {
        if intent.status == "requires_action" { return ok(intent) }  // the challenge is still open
        let allowed = ["requires_payment_method", "requires_confirmation"]
        guard allowed.contains(intent.status) else {
            return unexpectedState(intent, "confirmed", allowed + ["requires_action"])
        }
        if let method = form["payment_method"] { intent.paymentMethod = method }
        guard let method = intent.paymentMethod else {
            return invalid(
                "You cannot confirm this PaymentIntent because it's missing a payment method.", param: "payment_method",
                code: "payment_intent_unexpected_state")
        }
        let offSession = form["off_session"] == "true"
        intent.lastError = nil
        let refusal: StripeCardError? =
            switch method {
            case "pm_card_visa_chargeDeclined": .generic
            case "pm_card_visa_chargeDeclinedInsufficientFunds": .insufficientFunds
            case "pm_card_authenticationRequired" where offSession: .authenticationRequired
            case "pm_card_chargeCustomerFail" where offSession: .generic
            default: nil
            }
        if let refusal {
            intent.status = "requires_payment_method"
            intent.lastError = refusal
            return card(intent, refusal)
        }
        if method == "pm_card_authenticationRequired" {
            intent.status = "requires_action"
            intent.nextActionURL = base.appending(path: "standin/challenges/\(intent.id)").absoluteString
            return ok(intent)
        }
        authorized(&intent)
        return ok(intent)
    }

    /// The bank said yes: a manual intent holds the amount, an automatic one takes it.
    static func authorized(_ intent: inout StripeIntent) {
        intent.nextActionURL = nil
        if intent.captureMethod == "manual" {
            intent.status = "requires_capture"
            intent.amountCapturable = intent.amount
        } else {
            intent.status = "succeeded"
            intent.amountReceived = intent.amount
        }
    }

    static func answerChallenge(_ s: inout StripeState, _ id: String, passed: Bool) -> HTTPResponse {
        guard var intent = s.intents[id], intent.status == "requires_action" else {
            return .text("No challenge is open for \(id).", status: 404)
        }
        if passed {
            authorized(&intent)
        } else {
            intent.status = "requires_payment_method"
            intent.nextActionURL = nil
            intent.lastError = .authenticationFailed
        }
        s.intents[id] = intent
        return .text(passed ? "Challenge passed; return to the app." : "Challenge failed.")
    }

    static func capture(_ intent: inout StripeIntent, _ form: [String: String]) -> StripeAnswer {
        guard intent.status == "requires_capture" else {
            return unexpectedState(intent, "captured", ["requires_capture"])
        }
        let amount: Int
        if let text = form["amount_to_capture"] {
            guard let value = Int(text), value > 0 else {
                return invalid("Invalid positive integer", param: "amount_to_capture")
            }
            guard value <= intent.amountCapturable else {
                return invalid(
                    "The amount to capture (\(value)) must be less than or equal to the PaymentIntent's "
                        + "amount_capturable (\(intent.amountCapturable)).",
                    param: "amount_to_capture", code: "amount_too_large")
            }
            amount = value
        } else {
            amount = intent.amountCapturable
        }
        // final_capture defaults to true: what is not captured is released.
        intent.amountReceived = amount
        intent.amountCapturable = 0
        intent.status = "succeeded"
        return ok(intent)
    }

    static func cancel(_ intent: inout StripeIntent, _ form: [String: String]) -> StripeAnswer {
        let allowed = ["requires_payment_method", "requires_capture", "requires_confirmation", "requires_action"]
        guard allowed.contains(intent.status) else { return unexpectedState(intent, "canceled", allowed) }
        intent.status = "canceled"
        intent.amountCapturable = 0
        intent.nextActionURL = nil
        intent.cancellationReason = form["cancellation_reason"]
        return ok(intent)
    }
}
