public import Foundation

/// One line of a price: a quote's, a receipt's or an adjustment's, always in integer minor units.
public struct PriceLine: Codable, Sendable, Equatable {
    /// What the line is: `base`, `distance`, `time`, `wait`, `demand`, `minimumFare`, `item`, `deliveryFee`,
    /// `serviceFee`, `adjustment`, `cancellationFee`, `tip`.
    public let kind: String
    /// The line as a person reads it ("Distance 4.2 km").
    public let label: String
    public let amount: Money
    /// Baskets: the item's sku and how many.
    public let sku: String?
    public let quantity: Int?
    /// Why an adjustment was made ("Item out of stock", "Destination changed").
    public let reason: String?
    public init(
        kind: String, label: String, amount: Money, sku: String? = nil, quantity: Int? = nil, reason: String? = nil
    ) {
        self.kind = kind; self.label = label; self.amount = amount; self.sku = sku; self.quantity = quantity;
        self.reason = reason
    }
}

/// `POST /v1/orders/quote` body: the basket to price.
public struct OrderQuoteRequest: Codable, Sendable, Equatable {
    public let merchantId: String
    public let items: [OrderItem]
    public let destination: Coordinate
    /// Prices an order booked ahead for this collection time (15 minutes to 7 days from now).
    public let scheduledFor: Date?
    public init(merchantId: String, items: [OrderItem], destination: Coordinate, scheduledFor: Date? = nil) {
        self.merchantId = merchantId; self.items = items; self.destination = destination
        self.scheduledFor = scheduledFor
    }
}

/// `POST /v1/orders/quote` answer: the basket's item lines from the merchant's catalogue, the fees and the total.
public struct OrderQuote: Codable, Sendable, Equatable {
    public let quoteId: String
    public let expiresAt: Date
    /// One line per basket item (kind `item`).
    public let lines: [PriceLine]
    /// Delivery and service fees.
    public let fees: [PriceLine]
    public let total: Money
    public init(quoteId: String, expiresAt: Date, lines: [PriceLine], fees: [PriceLine], total: Money) {
        self.quoteId = quoteId; self.expiresAt = expiresAt; self.lines = lines; self.fees = fees; self.total = total
    }
}

/// `POST /v1/payment-methods` body: the gateway's token for a card the app added on the payment provider's own page.
public struct PaymentMethodRequest: Codable, Sendable, Equatable {
    /// Stripe's `pm_…`; no card number ever reaches EnRoute.
    public let token: String
    /// Make it the default method (the first one always is).
    public let makeDefault: Bool?
    public init(token: String, makeDefault: Bool? = nil) { self.token = token; self.makeDefault = makeDefault }
}

/// A saved payment method as the customer sees it: display details only.
public struct PaymentMethodSummary: Codable, Sendable, Equatable, Identifiable {
    public let id: String
    /// "visa", "mastercard", …
    public let brand: String
    public let last4: String
    public let expMonth: Int
    public let expYear: Int
    public let isDefault: Bool
    public init(id: String, brand: String, last4: String, expMonth: Int, expYear: Int, isDefault: Bool) {
        self.id = id; self.brand = brand; self.last4 = last4; self.expMonth = expMonth; self.expYear = expYear;
        self.isDefault = isDefault
    }
}

/// `GET /v1/payment-methods` answer.
public struct PaymentMethodList: Codable, Sendable, Equatable {
    public let methods: [PaymentMethodSummary]
    public init(methods: [PaymentMethodSummary]) { self.methods = methods }
}

/// Where a trip's payment stands (the payment machine), as the wire shows it.
public enum PaymentStatus: String, Codable, Sendable, CaseIterable {
    /// The hold is being placed.
    case authorizing
    /// The bank asked for a challenge the customer must answer.
    case actionRequired
    /// The quoted amount is held on the card.
    case held
    /// The whole hold was captured.
    case captured
    /// Part of the hold was captured and the rest released.
    case partiallyCaptured
    /// The hold was released; nothing was charged.
    case released
    /// The hold was refused.
    case failed
    /// A charge after the trip failed: the amount is owed on the account.
    case debt
}

/// `POST /v1/trips/{id}/tip` body.
public struct TipRequest: Codable, Sendable, Equatable {
    public let amountMinor: Int
    public init(amountMinor: Int) { self.amountMinor = amountMinor }
}

/// `POST /v1/trips/{id}/rating` body: one rating per party.
public struct RatingRequest: Codable, Sendable, Equatable {
    /// 1 to 5.
    public let stars: Int
    public let comment: String?
    public init(stars: Int, comment: String? = nil) { self.stars = stars; self.comment = comment }
}

/// The card a payment used, as a receipt shows it.
public struct CardSummary: Codable, Sendable, Equatable {
    public let brand: String
    public let last4: String
    public init(brand: String, last4: String) { self.brand = brand; self.last4 = last4 }
}

/// `GET /v1/trips/{id}/receipt`: what was charged and why, once the payment settles.
public struct Receipt: Codable, Sendable, Equatable {
    public let tripId: String
    /// "ride" or "delivery".
    public let kind: String
    public let payment: PaymentStatus
    /// Base, distance, time, wait, demand, fees, adjustments with reasons, cancellation fee, tip.
    public let lines: [PriceLine]
    public let total: Money
    public let card: CardSummary?
    public let requestedAt: Date
    public let startedAt: Date?
    public let endedAt: Date?
    /// The route driven, as a polyline of precision 6; nil when no path was kept.
    public let route: String?
    public init(
        tripId: String, kind: String, payment: PaymentStatus, lines: [PriceLine], total: Money, card: CardSummary?,
        requestedAt: Date, startedAt: Date?, endedAt: Date?, route: String?
    ) {
        self.tripId = tripId; self.kind = kind; self.payment = payment; self.lines = lines; self.total = total;
        self.card = card
        self.requestedAt = requestedAt; self.startedAt = startedAt; self.endedAt = endedAt; self.route = route
    }
}

/// `GET /v1/account/balance`: what the account owes (debts from charges that failed after a trip).
public struct AccountBalance: Codable, Sendable, Equatable {
    /// The sum owed; zero when nothing is.
    public let outstanding: Money
    /// The trips the debt comes from.
    public let tripIds: [String]
    public init(outstanding: Money, tripIds: [String]) { self.outstanding = outstanding; self.tripIds = tripIds }
}

/// `GET /v1/provider/earnings?from=&to=`: the provider's earnings and tips over a period, read from the ledger.
public struct ProviderEarnings: Codable, Sendable, Equatable {
    public struct Line: Codable, Sendable, Equatable {
        public let tripId: String
        public let kind: String
        public let amount: Money
        public let at: Date
        public init(tripId: String, kind: String, amount: Money, at: Date) {
            self.tripId = tripId; self.kind = kind; self.amount = amount; self.at = at
        }
    }
    public let from: Date
    public let to: Date
    public let total: Money
    public let lines: [Line]
    public init(from: Date, to: Date, total: Money, lines: [Line]) {
        self.from = from; self.to = to; self.total = total; self.lines = lines
    }
}

/// The extra members of the payment problems (402) and of `quote-expired` (409).
public enum PaymentProblemType {
    /// 402: the card was declined; `declineCode` and `nextStep` say why and what to do.
    public static let declined = "https://enroute.invalid/problems/payment-declined"
    /// 402: the bank asks for a challenge; `actionURL` is where the customer answers it.
    public static let actionRequired = "https://enroute.invalid/problems/payment-action-required"
    /// 402: a debt from an earlier trip must be paid first; `amount` says how much.
    public static let outstandingBalance = "https://enroute.invalid/problems/outstanding-balance"
    /// 402: no saved payment method to hold the price on.
    public static let methodRequired = "https://enroute.invalid/problems/payment-method-required"
    /// 409: the quote ran out; `quote` is a fresh one.
    public static let quoteExpired = "https://enroute.invalid/problems/quote-expired"
}

/// A 402 payment problem's body (RFC 9457 with the members above).
public struct PaymentProblem: Codable, Sendable, Equatable {
    public let type: String
    public let title: String
    public let status: Int
    public let detail: String
    /// The gateway's decline code (`insufficient_funds`, `generic_decline`, …).
    public let declineCode: String?
    /// What the customer can do next ("Try another card.").
    public let nextStep: String?
    /// The bank challenge to open.
    public let actionURL: URL?
    /// The amount owed.
    public let amount: Money?
    public init(
        type: String, title: String, status: Int = 402, detail: String, declineCode: String? = nil,
        nextStep: String? = nil,
        actionURL: URL? = nil, amount: Money? = nil
    ) {
        self.type = type; self.title = title; self.status = status; self.detail = detail; self.declineCode = declineCode
        self.nextStep = nextStep; self.actionURL = actionURL; self.amount = amount
    }
}

/// A 409 `quote-expired` body: the refusal with a fresh quote to show and confirm.
public struct QuoteExpiredProblem<Quote: Codable & Sendable & Equatable>: Codable, Sendable, Equatable {
    public let type: String
    public let title: String
    public let status: Int
    public let detail: String
    public let quote: Quote
    public init(detail: String, quote: Quote) {
        self.type = PaymentProblemType.quoteExpired; self.title = "Quote expired"; self.status = 409;
        self.detail = detail; self.quote = quote
    }
}

/// One basket line the merchant could not supply as ordered.
public struct BasketItemChange: Codable, Sendable, Equatable {
    /// The basket line's sku.
    public let sku: String
    /// `missing` (out of stock) or `replaced` (a substitute was packed).
    public let kind: String
    /// Missing: how many of the line are missing (all of it when absent).
    public let quantity: Int?
    /// Replaced: what was packed instead and its unit price in minor units (never more than the ordered item's is
    /// charged).
    public let replacementName: String?
    public let replacementUnitMinor: Int?
    public init(
        sku: String, kind: String, quantity: Int? = nil, replacementName: String? = nil,
        replacementUnitMinor: Int? = nil
    ) {
        self.sku = sku; self.kind = kind; self.quantity = quantity; self.replacementName = replacementName;
        self.replacementUnitMinor = replacementUnitMinor
    }
}

/// `POST /v1/merchant/orders/{id}/items` body: the basket lines that changed, before the order is ready.
public struct BasketChangeRequest: Codable, Sendable, Equatable {
    public let changes: [BasketItemChange]
    public init(changes: [BasketItemChange]) { self.changes = changes }
}
