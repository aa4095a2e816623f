import Foundation
import EnRouteDomain

/// The parts of Stripe's JSON that the gateway and the webhook verifier read.
enum StripeWire {
    /// A PaymentIntent (https://docs.stripe.com/api/payment_intents/object).
    struct PaymentIntent: Decodable {
        var id: String
        var status: String
        var amount: Int
        var amount_capturable: Int?
        var amount_received: Int?
        var currency: String
        var next_action: NextAction?
        var last_payment_error: Refusal?

        struct NextAction: Decodable {
            var type: String?
            var redirect_to_url: Redirect?
            struct Redirect: Decodable { var url: String? }
        }

        /// The seam's intent, or nil for a status the seam does not know.
        var intent: GatewayIntent? {
            guard let status = GatewayIntentStatus(rawValue: status) else { return nil }
            return GatewayIntent(
                id: id, status: status, amountMinor: amount, amountCapturable: amount_capturable ?? 0,
                amountReceived: amount_received ?? 0, currency: currency.uppercased(),
                actionURL: status == .requiresAction
                    ? next_action?.redirect_to_url?.url.flatMap(URL.init(string:)) : nil,
                lastError: last_payment_error?.decline)
        }
    }

    /// A Charge, as `charge.*` events carry it (https://docs.stripe.com/api/charges/object).
    struct Charge: Decodable {
        var payment_intent: String?
        var amount: Int
        var amount_captured: Int?
        var captured: Bool?
        var refunded: Bool?
        var status: String
        var currency: String
    }

    /// A refusal as an intent's `last_payment_error` keeps it.
    struct Refusal: Decodable {
        var code: String?
        var decline_code: String?
        var message: String?

        var decline: GatewayDecline {
            GatewayDecline(
                code: code ?? "card_declined", declineCode: decline_code, message: message ?? "The card was declined.")
        }
    }

    /// Stripe's error object (https://docs.stripe.com/api/errors).
    struct ErrorBody: Decodable {
        var type: String?
        var code: String?
        var decline_code: String?
        var message: String?
        var payment_intent: PaymentIntent?

        var decline: GatewayDecline { Refusal(code: code, decline_code: decline_code, message: message).decline }
    }

    /// `{"error": {...}}`.
    struct ErrorEnvelope: Decodable { var error: ErrorBody }

    /// A PaymentMethod's card (https://docs.stripe.com/api/payment_methods/object).
    struct PaymentMethod: Decodable {
        var id: String
        var card: Card?
        struct Card: Decodable { var brand: String; var last4: String; var exp_month: Int; var exp_year: Int }
    }

    /// A search's page (https://docs.stripe.com/api/payment_intents/search).
    struct SearchResult: Decodable { var data: [PaymentIntent] }

    /// An event (https://docs.stripe.com/api/events/object), its object read later by type.
    struct Event: Decodable {
        var id: String
        var type: String
        var created: Int
        var data: DataField
        struct DataField: Decodable { var object: ObjectKind }
        struct ObjectKind: Decodable { var object: String }
    }

    /// An event's `data.object` decoded as `T`.
    struct EventObject<T: Decodable>: Decodable {
        var data: DataField
        struct DataField: Decodable { var object: T }
    }
}
