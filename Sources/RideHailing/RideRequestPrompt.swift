public import Foundation
public import EnRouteModels

/// What the rider must do before a ride can be requested, after the server refused a confirmation.
public enum RideRequestPrompt: Equatable, Sendable {
    /// The quote ran out and was re-quoted (409 `quote-expired`): show the new price and confirm again.
    case confirmNewPrice(QuoteRefresh)
    /// The card was declined: say why and what to do, and offer another card.
    case cardDeclined(declineCode: String?, nextStep: String)
    /// The bank asks for a challenge: open `url`, then `TripViewModel.challengeAnswered()` repeats the request.
    case challenge(URL)
    /// A debt from an earlier trip must be paid first (`TripViewModel.settle()`).
    case outstandingBalance(Money)
    /// No saved card to hold the price on: add one.
    case addCard

    static let defaultNextStep = "Try another card."

    /// The prompt a 402 problem stands for.
    init(_ problem: PaymentProblem) {
        switch problem.type {
        case PaymentProblemType.actionRequired where problem.actionURL != nil:
            self = .challenge(problem.actionURL!)
        case PaymentProblemType.outstandingBalance where problem.amount != nil:
            self = .outstandingBalance(problem.amount!)
        case PaymentProblemType.methodRequired:
            self = .addCard
        default:
            // A decline, or a payment problem this client does not know: the card could not pay, try another.
            self = .cardDeclined(declineCode: problem.declineCode, nextStep: problem.nextStep ?? Self.defaultNextStep)
        }
    }

    /// The sentence the rider reads.
    public var message: String {
        switch self {
        case .confirmNewPrice(let refresh):
            refresh.priceChanged
                ? "The price changed from \(RideScreen.money(refresh.before)) to \(RideScreen.money(refresh.after)). "
                    + "Confirm to ride at the new price."
                : "Your quote ran out; the price is still \(RideScreen.money(refresh.after)). Confirm again to ride."
        case .cardDeclined(_, let nextStep):
            "Your card was declined. \(nextStep)"
        case .challenge:
            "Your bank needs you to confirm this payment. Open the link, then come back to request the ride."
        case .outstandingBalance(let amount):
            "You owe \(RideScreen.money(amount)) from an earlier trip. Pay it to request a ride."
        case .addCard:
            "Add a card to request a ride."
        }
    }
}
