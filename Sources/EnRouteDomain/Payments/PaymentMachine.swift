public import Foundation
public import EnRouteModels

/// A trip's payment: the hold on the customer's card, what was captured, what is owed, with a version of its own
/// (every applied event bumps it). Kept on the trip record from the trip's creation.
public struct TripPayment: Codable, Sendable, Equatable {
    public var state: PaymentStatus
    public var version: Int
    /// The gateway that holds it ("sandbox", "stripe") and its intent (`pi_…`).
    public var gateway: String
    public var intentId: String?
    /// The saved method it is on and that method's display details.
    public var methodId: String?
    /// The method's gateway token (`pm_…`), for charges with the customer absent; never shown to anyone.
    public var token: String?
    public var card: CardSummary?
    public var currency: String
    /// The amount the hold was placed for.
    public var heldMinor: Int
    /// Taken so far: out of the hold, plus any off-session charge for a final price above the hold.
    public var capturedMinor: Int
    /// Owed by the customer after a charge failed (the debt).
    public var owedMinor: Int
    /// The bank challenge to answer while `actionRequired`.
    public var actionURL: URL?
    /// The last refusal, when the hold or a charge was declined.
    public var decline: GatewayDecline?
    /// When the gateway confirmed the money arrived (on the gateway's callback).
    public var paidAt: Date?

    public init(
        state: PaymentStatus = .authorizing, gateway: String, intentId: String? = nil, methodId: String?,
        card: CardSummary?,
        currency: String, heldMinor: Int
    ) {
        self.state = state; self.version = 1; self.gateway = gateway; self.intentId = intentId;
        self.methodId = methodId; self.card = card
        self.currency = currency; self.heldMinor = heldMinor; self.capturedMinor = 0; self.owedMinor = 0
    }
}

/// What happens to a payment.
public enum PaymentEvent: Sendable, Equatable {
    /// The gateway placed the hold (`requires_capture`).
    case authorized(intentId: String, amountMinor: Int)
    /// The bank asks for a challenge (`requires_action`).
    case challenged(intentId: String, url: URL)
    /// The hold was refused.
    case declined(GatewayDecline)
    /// `amountMinor` was captured out of the hold and the rest released.
    case captured(amountMinor: Int)
    /// The hold was released with nothing taken (a free cancellation, a hold with no trip, an expired hold).
    case released
    /// A final price above the hold: the difference was charged off-session.
    case charged(amountMinor: Int)
    /// That off-session charge failed: the amount is now owed.
    case chargeFailed(amountMinor: Int, GatewayDecline)
    /// The customer paid what was owed.
    case settled(amountMinor: Int)
    /// The gateway confirmed the money arrived.
    case confirmed(at: Date)
}

/// The payment machine: which event is allowed in which state, and what it leaves.
///
/// `authorizing → held → captured | partiallyCaptured | released`, with `actionRequired` (a challenge between
/// authorizing and held), `failed` (refused) and `debt` (a charge after the trip failed). Pure: no clock, no I/O.
public enum PaymentMachine {
    /// Applies `event` to `payment`, bumping its version, or says why the event does not apply in its state.
    public static func apply(_ event: PaymentEvent, to payment: TripPayment) -> Result<TripPayment, MoveRefusal> {
        var next = payment
        switch (payment.state, event) {
        case (.authorizing, .authorized(let intent, let amount)) where amount > 0,
            (.actionRequired, .authorized(let intent, let amount)) where amount > 0:
            next.state = .held
            next.intentId = intent
            next.heldMinor = amount
            next.actionURL = nil
            next.decline = nil
        case (.authorizing, .challenged(let intent, let url)):
            next.state = .actionRequired
            next.intentId = intent
            next.actionURL = url
        case (.authorizing, .declined(let decline)), (.actionRequired, .declined(let decline)):
            next.state = .failed
            next.decline = decline
            next.actionURL = nil
        case (.held, .captured(let amount)) where amount > 0 && amount <= payment.heldMinor:
            next.state = amount == payment.heldMinor ? .captured : .partiallyCaptured
            next.capturedMinor = amount
        case (.held, .captured(let amount)) where amount == 0:
            next.state = .released
        case (.authorizing, .released), (.actionRequired, .released), (.held, .released):
            next.state = .released
            next.actionURL = nil
        case (.captured, .charged(let amount)) where amount > 0:
            next.capturedMinor += amount
        case (.captured, .chargeFailed(let amount, let decline)) where amount > 0:
            next.state = .debt
            next.owedMinor += amount
            next.decline = decline
        case (.debt, .settled(let amount)) where amount == payment.owedMinor:
            next.state = .captured
            next.capturedMinor += amount
            next.owedMinor = 0
            next.decline = nil
        case (.captured, .confirmed(let at)), (.partiallyCaptured, .confirmed(let at)), (.debt, .confirmed(let at)):
            guard payment.paidAt == nil else { return .failure(MoveRefusal("The payment was confirmed already.")) }
            next.paidAt = at
        default:
            return .failure(MoveRefusal("A payment that is \(payment.state.rawValue) cannot take \(describe(event))."))
        }
        next.version = payment.version + 1
        return .success(next)
    }

    /// The event's name in refusals.
    static func describe(_ event: PaymentEvent) -> String {
        switch event {
        case .authorized: "an authorization"
        case .challenged: "a challenge"
        case .declined: "a decline"
        case .captured(let amount): "a capture of \(amount)"
        case .released: "a release"
        case .charged(let amount): "a charge of \(amount)"
        case .chargeFailed: "a failed charge"
        case .settled(let amount): "a settlement of \(amount)"
        case .confirmed: "a confirmation"
        }
    }

    /// True once nothing more will happen to the hold (it was captured, released or refused).
    public static func isSettled(_ state: PaymentStatus) -> Bool {
        switch state {
        case .captured, .partiallyCaptured, .released, .failed, .debt: true
        case .authorizing, .actionRequired, .held: false
        }
    }
}
