public import Foundation

/// A card's display details, read from the gateway for a token: all EnRoute ever keeps of a card.
public struct CardDetails: Sendable, Equatable, Codable {
    public let brand: String
    public let last4: String
    public let expMonth: Int
    public let expYear: Int
    public init(brand: String, last4: String, expMonth: Int, expYear: Int) {
        self.brand = brand; self.last4 = last4; self.expMonth = expMonth; self.expYear = expYear
    }
}

/// A PaymentIntent's status, in Stripe's vocabulary.
public enum GatewayIntentStatus: String, Sendable, Equatable, Codable {
    case requiresPaymentMethod = "requires_payment_method"
    case requiresConfirmation = "requires_confirmation"
    case requiresAction = "requires_action"
    case processing
    /// A manual-capture intent whose hold is placed.
    case requiresCapture = "requires_capture"
    case canceled
    case succeeded
}

/// Why the gateway refused a card: Stripe's `code` (`card_declined`, `authentication_required`, …), its
/// `decline_code` (`insufficient_funds`, `generic_decline`, …) and its message.
public struct GatewayDecline: Sendable, Equatable, Codable {
    public let code: String
    public let declineCode: String?
    public let message: String
    public init(code: String, declineCode: String?, message: String) {
        self.code = code; self.declineCode = declineCode; self.message = message
    }
}

/// A payment at the gateway (a Stripe PaymentIntent): what is held, what was taken, what the bank asks for.
public struct GatewayIntent: Sendable, Equatable, Codable {
    /// The gateway's id (`pi_…`).
    public let id: String
    public var status: GatewayIntentStatus
    /// The amount asked for, in minor units.
    public var amountMinor: Int
    /// What a capture may still take (the hold), while `requiresCapture`.
    public var amountCapturable: Int
    /// What was taken.
    public var amountReceived: Int
    public let currency: String
    /// The bank challenge to open, while `requiresAction`.
    public var actionURL: URL?
    /// The last refusal, if the latest attempt was refused.
    public var lastError: GatewayDecline?
    public init(
        id: String, status: GatewayIntentStatus, amountMinor: Int, amountCapturable: Int = 0, amountReceived: Int = 0,
        currency: String,
        actionURL: URL? = nil, lastError: GatewayDecline? = nil
    ) {
        self.id = id; self.status = status; self.amountMinor = amountMinor; self.amountCapturable = amountCapturable
        self.amountReceived = amountReceived; self.currency = currency; self.actionURL = actionURL;
        self.lastError = lastError
    }
}

/// What went wrong talking to the gateway.
public enum PaymentGatewayError: Error, Sendable, Equatable {
    /// The card was refused (a 402 with a decline); the intent the refusal left behind when there is one.
    case declined(GatewayDecline, intent: GatewayIntent?)
    /// No answer, or one that does not say what happened (a timeout, a 5xx, a cut connection): the call may or may
    /// not have taken effect, so the intent must be retrieved before anything is retried.
    case ambiguous(String)
    /// The gateway refused the request itself (a 400 or 404: a bad token, an intent in the wrong state); retrying is
    /// pointless.
    case rejected(String)
}

/// What a hold asks for: the amount, on which saved method, under which idempotency key.
public struct AuthorizationRequest: Sendable, Equatable {
    public let amountMinor: Int
    public let currency: String
    /// The saved method's gateway token (`pm_…`).
    public let paymentMethod: String
    /// The gateway's customer for the account, when the gateway keeps one.
    public let customer: String?
    /// Derived from what is paid for and the operation (for example `hold:q_123`), and persisted before the call.
    public let idempotencyKey: String
    /// Shown on the gateway's dashboard ("EnRoute ride T1").
    public let description: String
    public init(
        amountMinor: Int, currency: String, paymentMethod: String, customer: String? = nil, idempotencyKey: String,
        description: String
    ) {
        self.amountMinor = amountMinor; self.currency = currency; self.paymentMethod = paymentMethod;
        self.customer = customer
        self.idempotencyKey = idempotencyKey; self.description = description
    }
}

/// A payment gateway: holds, captures, releases and off-session charges on saved payment tokens (Stripe's
/// PaymentIntents with `capture_method=manual`, or the in-process sandbox).
///
/// Every call that changes money carries an idempotency key: the same key sent again returns the first answer and
/// never moves money twice. After `.ambiguous`, call `retrieve` before any retry: a replayed error is not the truth.
public protocol PaymentGateway: Sendable {
    /// The gateway's name for logs and the ledger ("sandbox", "stripe").
    var name: String { get }
    /// The display details of the card behind a token; `.rejected` for a token the gateway does not know.
    func describe(token: String) async throws(PaymentGatewayError) -> CardDetails
    /// Places a hold of the amount (`capture_method=manual`, `confirm=true`): `requiresCapture` when held,
    /// `requiresAction` with an `actionURL` when the bank asks for a challenge; `.declined` when refused.
    func authorize(_ request: AuthorizationRequest) async throws(PaymentGatewayError) -> GatewayIntent
    /// The intent as the gateway has it now.
    func retrieve(intentId: String) async throws(PaymentGatewayError) -> GatewayIntent
    /// Takes `amountMinor` (≤ the hold) out of a held intent and releases the rest.
    func capture(
        intentId: String, amountMinor: Int, idempotencyKey: String
    ) async throws(PaymentGatewayError) -> GatewayIntent
    /// Releases a hold (or abandons an intent waiting for a challenge).
    func cancel(intentId: String, idempotencyKey: String) async throws(PaymentGatewayError) -> GatewayIntent
    /// Charges a saved method with the customer absent (`off_session=true`, `confirm=true`, automatic capture):
    /// `succeeded`, or `.declined` (which after a trip becomes a debt).
    func charge(_ request: AuthorizationRequest) async throws(PaymentGatewayError) -> GatewayIntent
}

/// Something the gateway tells the backend after the fact (a webhook): an intent changed.
public struct GatewayEvent: Sendable, Equatable, Codable {
    /// The event's own id (`evt_…`), to apply each once.
    public let id: String
    /// `payment_intent.succeeded`, `payment_intent.payment_failed`, `payment_intent.canceled`, `charge.expired`, …
    public let type: String
    public let intent: GatewayIntent
    /// When the gateway created the event.
    public let created: Date
    public init(id: String, type: String, intent: GatewayIntent, created: Date) {
        self.id = id; self.type = type; self.intent = intent; self.created = created
    }
}
