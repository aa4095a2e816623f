public import EnRouteModels

/// Everything the after-trip screen shows: the receipt, the tip and the rating.
public struct ReceiptViewState: Equatable, Sendable {
    /// Where the tip stands; a trip is tipped once.
    public enum TipStatus: Equatable, Sendable {
        case notSent, sending
        /// Tipped; the amount is nil when the server said it was tipped before (from another device).
        case sent(amountMinor: Int?)
        /// The server no longer takes a tip for this trip (72 h after completion).
        case closed
    }

    /// Where the rating stands; a trip is rated once.
    public enum RatingStatus: Equatable, Sendable {
        case notSent, sending
        /// Rated; the stars are nil when the server said it was rated before.
        case sent(stars: Int?)
    }

    /// The receipt, once the payment has settled.
    public var receipt: Receipt?
    /// A load is in flight, its polite retries included.
    public var isLoading = false
    /// The server has no receipt yet because the payment has not settled; the model asks again.
    public var isWaitingForPayment = false
    public var tip = TipStatus.notSent
    public var rating = RatingStatus.notSent
    /// A message for the rider, or nil.
    public var errorMessage: String?

    /// Nothing loaded yet.
    public init() {}

    /// True when the rider may tip now.
    public var canTip: Bool { tip == .notSent }
    /// The tip button's label in the receipt's currency ("Tip USD 1.00", "Tip JPY 100"); minor units as given
    /// before the receipt, whose currency is not known yet, has loaded.
    public func tipLabel(amountMinor: Int) -> String {
        guard let currency = receipt?.total.currency else { return "Tip \(amountMinor)" }
        return "Tip " + MoneyFormat.string(amountMinor: amountMinor, currency: currency)
    }

    /// True when the rider may rate now.
    public var canRate: Bool { rating == .notSent }
}
