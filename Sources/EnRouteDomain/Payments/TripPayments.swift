public import Foundation
public import EnRouteModels
public import EnRouteLogging

/// A saved card to hold or charge: the method's id, its gateway token and what the customer is shown of it.
public struct SavedCard: Sendable, Equatable {
    public let id: String
    public let token: String
    public let card: CardSummary
    public init(id: String, token: String, card: CardSummary) { self.id = id; self.token = token; self.card = card }
}

/// The money side of the trip service: quotes, the gateway, the customer's default card and the price list.
public final class TripPayments: Sendable {
    public let quotes: QuoteBook
    public let gateway: any PaymentGateway
    let store: any TripStore
    let defaultCard: @Sendable (_ accountId: String) async throws -> SavedCard?
    let log: Logger
    /// A tip may be given this long after the trip ended.
    public let tipWindow: TimeInterval = 72 * 3600
    /// The largest tip, in minor units.
    public let maximumTipMinor = 10_000
    /// A hold whose trip was never created is released after this long (the create request is long gone).
    public let unattachedHoldTimeout: TimeInterval

    /// A hold this old is re-checked at the gateway on each reconciler pass (Visa's merchant-initiated holds last 4
    /// days 18 hours).
    public let holdRecheckAge: TimeInterval = 4 * 86_400

    public var rules: PricingRules { quotes.rules }

    /// Money over `store` (the trips' store: holds and the ledger commit with trip changes) through `gateway`, holding
    /// on the card `defaultCard` names for an account.
    public init(
        quotes: QuoteBook, gateway: any PaymentGateway, store: any TripStore,
        defaultCard: @escaping @Sendable (_ accountId: String) async throws -> SavedCard?,
        unattachedHoldTimeout: TimeInterval = 15 * 60,
        log: Logger = .discard
    ) {
        self.quotes = quotes; self.gateway = gateway; self.store = store; self.defaultCard = defaultCard; self.log = log
        self.unattachedHoldTimeout = unattachedHoldTimeout
    }

    /// What `customer` owes from charges that failed after their trips, in minor units.
    public func owed(by customer: String) async throws -> Int {
        -(try await store.ledgerBalance(account: Ledger.owed(customer)))
    }

    /// The trips `customer` owes money for, with how much each.
    public func debts(of customer: String) throws -> [(tripId: String, amountMinor: Int)] {
        let rows = try store.ledger(account: Ledger.owed(customer), from: .distantPast, to: .distantFuture)
        var owed: [String: Int] = [:], order: [String] = []
        for row in rows {
            guard let trip = row.tripId else { continue }
            if owed[trip] == nil { order.append(trip) }
            owed[trip, default: 0] -= row.amountMinor
        }
        return order.compactMap { trip in owed[trip].flatMap { $0 > 0 ? (trip, $0) : nil } }
    }

    /// The account's balance on the wire.
    public func balance(of customer: String) throws -> AccountBalance {
        let debts = try debts(of: customer)
        return AccountBalance(
            outstanding: Money(amountMinor: debts.reduce(0) { $0 + $1.amountMinor }, currency: rules.currency),
            tripIds: debts.map(\.tripId))
    }

    /// Refuses a new request (402 `outstanding-balance`) while the account owes money from any trip.
    public func checkBalance(of account: Account) async throws(TripError) {
        let owed: Int
        do { owed = try await self.owed(by: account.id) } catch { throw TripError.contended }
        guard owed > 0 else { return }
        let amount = Money(amountMinor: owed, currency: rules.currency)
        throw TripError.payment(
            PaymentProblem(
                type: PaymentProblemType.outstandingBalance, title: "Outstanding balance",
                detail:
                    "A payment for an earlier trip failed: \(Self.format(amount)) is outstanding. Pay it to "
                    + "request again.",
                nextStep: "Pay the balance (POST /v1/account/balance/settle), with another card if needed.",
                amount: amount))
    }

    /// Refuses a trip booked ahead (402 `payment-method-required`) when the account has no saved card: its hold is
    /// placed when its search begins, on the card that is the default then (each card was checked with the gateway when
    /// it was saved).
    public func requireCard(of account: Account) async throws(TripError) {
        let card: SavedCard?
        do { card = try await defaultCard(account.id) } catch { throw TripError.contended }
        guard card != nil else { throw TripError.payment(Self.methodRequired) }
    }

    /// The 402 for a refused card, in words a customer reads, with what to do next.
    public static func declined(_ decline: GatewayDecline) -> PaymentProblem {
        let (detail, next): (String, String)
        switch decline.declineCode ?? decline.code {
        case "insufficient_funds":
            (detail, next) = ("Your card was declined: the account has insufficient funds.", "Try another card.")
        case "expired_card": (detail, next) = ("Your card has expired.", "Add a new card or choose another one.")
        case "incorrect_cvc", "invalid_cvc":
            (detail, next) = (
                "Your card's security code was not accepted.", "Check the card's details or try another card."
            )
        case "lost_card", "stolen_card", "pickup_card", "fraudulent", "do_not_honor":
            (detail, next) = ("Your card was declined by your bank.", "Try another card, or contact your bank.")
        case "processing_error":
            (detail, next) = ("Your card could not be processed.", "Try again in a moment, or try another card.")
        case "invalid_payment_method":
            (detail, next) = ("This card can no longer be used.", "Add a new card or choose another one.")
        default: (detail, next) = ("Your card was declined.", "Try another card.")
        }
        return PaymentProblem(
            type: PaymentProblemType.declined, title: "Payment declined", detail: detail,
            declineCode: decline.declineCode ?? decline.code, nextStep: next)
    }

    /// The 402 for a bank challenge.
    public static func challenge(_ url: URL) -> PaymentProblem {
        PaymentProblem(
            type: PaymentProblemType.actionRequired, title: "Confirm the payment with your bank",
            detail: "Your bank asks you to confirm this payment.",
            nextStep: "Open the link, confirm, then send the same request again (same quote, a new Idempotency-Key).",
            actionURL: url)
    }

    /// The 402 when no card is saved.
    public static let methodRequired = PaymentProblem(
        type: PaymentProblemType.methodRequired, title: "Add a payment method",
        detail: "No card is saved to pay with.", nextStep: "Add a card (POST /v1/payment-methods), then try again.")

    /// "€12.34".
    static func format(_ money: Money) -> String {
        let symbol = ["EUR": "€", "USD": "$", "GBP": "£"][money.currency] ?? money.currency + " "
        return symbol + String(format: "%d.%02d", money.amountMinor / 100, abs(money.amountMinor % 100))
    }
}

/// Work the payment worker does after the request that caused it, from the trips' outbox (topic `payments`).
public enum PaymentJob: Sendable, Equatable, Codable {
    /// Capture, charge or release the trip's hold now that it ended.
    case settle(String)
    /// Charge the trip's tip.
    case tip(String)
    /// Apply a gateway callback.
    case event(GatewayEvent)

    public static let topic = "payments"

    /// What the job acts on: jobs of one subject run in order.
    public var subject: String {
        switch self {
        case .settle(let trip), .tip(let trip): "trip:" + trip
        case .event(let event): "intent:" + event.intent.id
        }
    }

    /// The job as an outbox message; its id makes a second enqueue of the same work a no-op.
    public func message(at: Date) -> OutboxMessage {
        let id: String
        switch self {
        case .settle(let trip): id = "settle:" + trip
        case .tip(let trip): id = "tip:" + trip
        case .event(let event): id = "event:" + event.id
        }
        return OutboxMessage(
            id: id, topic: Self.topic, payload: Array((try? JSONEncoder().encode(self)) ?? Data()), createdAt: at)
    }

    /// Reads a job back from its message.
    public static func decode(_ payload: [UInt8]) throws -> PaymentJob {
        try JSONDecoder().decode(PaymentJob.self, from: Data(payload))
    }
}
