public import Foundation
public import EnRouteModels

/// How a product's ride is priced: a base, a rate per kilometre and per minute, a minimum fare, and the wait at
/// pickup that is free. All amounts are integer minor units of `PricingRules.currency`.
///
/// Rounding, stated once for all of money: each line is computed in exact minor units and rounded half away from zero
/// to a whole minor unit; a total is the sum of its rounded lines, so a receipt always adds up. "Exact" means a line is
/// one product divided once (metres × rate / 1000, seconds × rate / 60, subtotal × basis points / 10 000), never a
/// product of already-divided binary fractions, which would land a hair under a half (1.15 km × 110 = 126.4999…).
public struct FareRule: Sendable, Codable, Equatable {
    public var baseMinor: Int
    public var perKmMinor: Int
    public var perMinuteMinor: Int
    public var minimumMinor: Int
    /// Minutes of waiting at pickup (from the provider's arrival to the start of the ride) that cost nothing.
    public var freeWaitMinutes: Int
    /// What each further minute of waiting costs.
    public var perWaitMinuteMinor: Int
    public init(
        baseMinor: Int, perKmMinor: Int, perMinuteMinor: Int, minimumMinor: Int, freeWaitMinutes: Int = 3,
        perWaitMinuteMinor: Int = 30
    ) {
        self.baseMinor = baseMinor; self.perKmMinor = perKmMinor; self.perMinuteMinor = perMinuteMinor;
        self.minimumMinor = minimumMinor
        self.freeWaitMinutes = freeWaitMinutes; self.perWaitMinuteMinor = perWaitMinuteMinor
    }
}

/// The busy-time multiplier from open requests against online providers in the area.
public struct DemandRule: Sendable, Codable, Equatable {
    /// Below this many open requests per online provider, no surcharge.
    public var threshold: Double = 1.0
    /// How much the multiplier grows per request per provider above the threshold.
    public var slope: Double = 0.5
    /// The multiplier never exceeds this.
    public var cap: Double = 2.0
    public init() {}

    /// The multiplier for `open` requests and `online` providers, in steps of 0.1 (1.0 when calm; capped).
    public func multiplier(open: Int, online: Int) -> Double { multiplier(open: Double(open), online: Double(online)) }

    /// The multiplier for smoothed counts (a zone's average over minutes), as for whole ones.
    public func multiplier(open: Double, online: Double) -> Double {
        guard open > 0 else { return 1 }
        let ratio = open / max(online, 1)
        let raw = 1 + max(0, ratio - threshold) * slope
        return min(cap, (raw * 10).rounded(.down) / 10)
    }
}

/// Delivery fees: a fixed fee, a rate per kilometre from the merchant to the door, a service fee as a share of the
/// basket, and a small-basket fee under a threshold.
public struct DeliveryFeeRule: Sendable, Codable, Equatable {
    public var baseMinor = 199
    public var perKmMinor = 50
    /// Basis points of the basket's subtotal (500 = 5 %).
    public var serviceFeeBasisPoints = 500
    public var serviceFeeMinimumMinor = 50
    public var smallBasketThresholdMinor = 1000
    public var smallBasketFeeMinor = 200
    public init() {}
}

/// Cancellation and no-show fees.
public struct CancellationRule: Sendable, Codable, Equatable {
    /// A cancellation within this long of the provider's assignment is free.
    public var graceSeconds: TimeInterval = 120
    /// Waiting at pickup this long makes the rider a no-show.
    public var noShowSeconds: TimeInterval = 300
    public var feeMinor = 500
    public init() {}
}

/// The product's price list: what `Pricing` computes quotes and final prices under, recorded on each quote.
public struct PricingRules: Sendable, Codable, Equatable {
    public var currency = "EUR"
    public var products: [String: FareRule] = [
        "economy": FareRule(baseMinor: 300, perKmMinor: 110, perMinuteMinor: 25, minimumMinor: 700),
        "xl": FareRule(baseMinor: 480, perKmMinor: 176, perMinuteMinor: 40, minimumMinor: 1100, perWaitMinuteMinor: 45),
    ]
    public var demand = DemandRule()
    public var delivery = DeliveryFeeRule()
    public var cancellation = CancellationRule()
    /// The provider's share of a fare and of a delivery fee, in basis points (the platform keeps the rest); tips go
    /// whole to the provider.
    public var providerShareBasisPoints = 7500
    public init() {}
}

/// A priced thing: its lines and their sum.
public struct PriceBreakdown: Sendable, Codable, Equatable {
    public let lines: [PriceLine]
    public let total: Money
    public init(lines: [PriceLine], currency: String) {
        self.lines = lines
        self.total = Money(amountMinor: lines.reduce(0) { $0 + $1.amount.amountMinor }, currency: currency)
    }
}

/// Pure pricing: quotes before a trip and final prices after it. No clock, no
/// I/O.
public enum Pricing {
    /// `value` minor units rounded half away from zero: the one rounding rule of money.
    public static func round(_ value: Double) -> Int { Int(value.rounded(.toNearestOrAwayFromZero)) }

    /// `amount` × `rate` / `per`, rounded half away from zero: multiplied first, so an exact half stays exactly a half.
    static func rate(_ amount: Double, _ rate: Int, per: Double) -> Int { round(amount * Double(rate) / per) }

    /// The demand surcharge on `subtotal` under `multiplier`: the part above 1, counted in basis points (the
    /// multiplier's steps of 0.1 are exact there), so 1105 × (1.9 − 1) is 994.5 → 995 and not 994.4999….
    static func demandSurcharge(_ subtotal: Int, _ multiplier: Double) -> Int {
        let basisPoints = Int(((multiplier - 1) * 10_000).rounded())
        return round(Double(subtotal * basisPoints) / 10_000)
    }

    /// A ride of `distanceMeters` and `durationSeconds` for `product`, under `demand` (1.0 when calm); nil for an
    /// unknown product.
    public static func ride(
        product: String, distanceMeters: Double, durationSeconds: Double, demand: Double, rules: PricingRules
    ) -> PriceBreakdown? {
        guard let rule = rules.products[product] else { return nil }
        let c = rules.currency
        let meters = max(0, distanceMeters), seconds = max(0, durationSeconds)
        var lines = [
            PriceLine(kind: "base", label: "Base fare", amount: Money(amountMinor: rule.baseMinor, currency: c)),
            PriceLine(
                kind: "distance", label: String(format: "Distance %.1f km", meters / 1000),
                amount: Money(amountMinor: rate(meters, rule.perKmMinor, per: 1000), currency: c)),
            PriceLine(
                kind: "time", label: "Time \(Int((seconds / 60).rounded())) min",
                amount: Money(amountMinor: rate(seconds, rule.perMinuteMinor, per: 60), currency: c)),
        ]
        let subtotal = lines.reduce(0) { $0 + $1.amount.amountMinor }
        if demand > 1 {
            lines.append(
                PriceLine(
                    kind: "demand", label: String(format: "Busy time ×%.1f", demand),
                    amount: Money(amountMinor: demandSurcharge(subtotal, demand), currency: c)))
        }
        let sum = lines.reduce(0) { $0 + $1.amount.amountMinor }
        if sum < rule.minimumMinor {
            lines.append(
                PriceLine(
                    kind: "minimumFare", label: "Minimum fare",
                    amount: Money(amountMinor: rule.minimumMinor - sum, currency: c)))
        }
        return PriceBreakdown(lines: lines, currency: c)
    }

    /// A basket's item lines (`items` with each one's catalogue price) and its fees for `distanceMeters` from the
    /// merchant to the door.
    public static func basket(
        items: [(sku: String, name: String, quantity: Int, unit: Money)], distanceMeters: Double, rules: PricingRules
    ) -> (lines: [PriceLine], fees: [PriceLine], total: Money) {
        let c = rules.currency, fee = rules.delivery
        let lines = items.map { item in
            PriceLine(
                kind: "item", label: "\(item.quantity) × \(item.name)",
                amount: Money(amountMinor: item.unit.amountMinor * item.quantity, currency: c),
                sku: item.sku, quantity: item.quantity)
        }
        let subtotal = lines.reduce(0) { $0 + $1.amount.amountMinor }
        var fees = [
            PriceLine(
                kind: "deliveryFee", label: "Delivery",
                amount: Money(
                    amountMinor: fee.baseMinor + rate(max(0, distanceMeters), fee.perKmMinor, per: 1000), currency: c)),
            PriceLine(
                kind: "serviceFee", label: "Service fee",
                amount: Money(
                    amountMinor: max(
                        fee.serviceFeeMinimumMinor, round(Double(subtotal) * Double(fee.serviceFeeBasisPoints) / 10_000)
                    ), currency: c)),
        ]
        if subtotal < fee.smallBasketThresholdMinor {
            fees.append(
                PriceLine(
                    kind: "smallBasketFee", label: "Small basket",
                    amount: Money(amountMinor: fee.smallBasketFeeMinor, currency: c)))
        }
        let total = (lines + fees).reduce(0) { $0 + $1.amount.amountMinor }
        return (lines, fees, Money(amountMinor: total, currency: c))
    }

    /// What happened on a ride, as the backend measured it.
    public struct RideOutcome: Sendable, Equatable {
        /// The destination the ride ended at differs from the quoted one.
        public var destinationChanged: Bool
        /// Seconds from the provider's arrival at pickup to the start of the ride.
        public var waitSeconds: TimeInterval
        /// The measured path: map-matched when there are roads, the stored path's length otherwise.
        public var distanceMeters: Double
        public var durationSeconds: Double
        public init(
            destinationChanged: Bool, waitSeconds: TimeInterval, distanceMeters: Double, durationSeconds: Double
        ) {
            self.destinationChanged = destinationChanged; self.waitSeconds = waitSeconds
            self.distanceMeters = distanceMeters; self.durationSeconds = durationSeconds
        }
    }

    /// A ride's final price: the quote as it stands, unless the destination changed or the wait passed the free
    /// minutes;
    /// then priced again from the measured distance and time under the quote's demand, with the paid wait added, each
    /// adjustment with its reason.
    public static func finalRide(
        quote: PriceBreakdown, product: String, demand: Double, outcome: RideOutcome, rules: PricingRules
    ) -> PriceBreakdown {
        guard let rule = rules.products[product] else { return quote }
        let freeWait = TimeInterval(rule.freeWaitMinutes * 60)
        let waited = outcome.waitSeconds > freeWait
        guard outcome.destinationChanged || waited,
            let measured = ride(
                product: product, distanceMeters: outcome.distanceMeters, durationSeconds: outcome.durationSeconds,
                demand: demand, rules: rules)
        else { return quote }
        let reason =
            outcome.destinationChanged
            ? "Destination changed: priced on the distance and time driven"
            : "Long wait at pickup: priced on the distance and time driven"
        var lines = measured.lines.map { PriceLine(kind: $0.kind, label: $0.label, amount: $0.amount, reason: reason) }
        if waited {
            let paidMinutes = Int(((outcome.waitSeconds - freeWait) / 60).rounded(.up))
            lines.append(
                PriceLine(
                    kind: "wait", label: "Wait at pickup \(paidMinutes) min",
                    amount: Money(amountMinor: paidMinutes * rule.perWaitMinuteMinor, currency: rules.currency),
                    reason: "Waited past the \(rule.freeWaitMinutes) free minutes"))
        }
        return PriceBreakdown(lines: lines, currency: rules.currency)
    }

    /// A basket line the merchant changed before the order was ready.
    public struct BasketChange: Sendable, Codable, Equatable {
        public enum Kind: String, Sendable, Codable { case missing, replaced }
        public let sku: String
        public let kind: Kind
        /// Missing: how many of the line could not be supplied (all of it when nil).
        public let quantity: Int?
        /// Replaced: what was supplied instead and its unit price.
        public let replacementName: String?
        public let replacementUnit: Money?
        public init(
            sku: String, kind: Kind, quantity: Int? = nil, replacementName: String? = nil, replacementUnit: Money? = nil
        ) {
            self.sku = sku; self.kind = kind; self.quantity = quantity; self.replacementName = replacementName;
            self.replacementUnit = replacementUnit
        }
    }

    /// A basket's final price: the quoted lines with an adjustment line per missing or replaced item, with its reason.
    /// A later change of a line replaces an earlier one (so no line is ever taken twice). The fees stay as quoted
    /// except
    /// the service fee, which follows the adjusted subtotal.
    public static func finalBasket(
        quote: PriceBreakdown, changes: [BasketChange], rules: PricingRules
    ) -> PriceBreakdown {
        let c = rules.currency
        var lines = quote.lines
        let latest = changes.indices.filter { i in !changes[(i + 1)...].contains { $0.sku == changes[i].sku } }.map {
            changes[$0]
        }
        for change in latest {
            guard let line = quote.lines.first(where: { $0.kind == "item" && $0.sku == change.sku }),
                let quantity = line.quantity, quantity > 0
            else { continue }
            let unit = line.amount.amountMinor / quantity
            switch change.kind {
            case .missing:
                let n = min(quantity, max(1, change.quantity ?? quantity))
                lines.append(
                    PriceLine(
                        kind: "adjustment", label: "\(n) × \(change.sku) missing",
                        amount: Money(amountMinor: -unit * n, currency: c),
                        sku: change.sku, quantity: n, reason: "Out of stock"))
            case .replaced:
                let replacement = change.replacementUnit?.amountMinor ?? unit
                // A replacement never costs the customer more than what was ordered.
                let delta = min(0, replacement - unit) * quantity
                lines.append(
                    PriceLine(
                        kind: "adjustment",
                        label: "\(change.sku) replaced by \(change.replacementName ?? "a substitute")",
                        amount: Money(amountMinor: delta, currency: c), sku: change.sku, quantity: quantity,
                        reason: "Replaced by the merchant"))
            }
        }
        let subtotal = lines.filter { $0.kind == "item" || $0.kind == "adjustment" }.reduce(0) {
            $0 + $1.amount.amountMinor
        }
        if let i = lines.firstIndex(where: { $0.kind == "serviceFee" }) {
            let fee = max(
                rules.delivery.serviceFeeMinimumMinor,
                round(Double(subtotal) * Double(rules.delivery.serviceFeeBasisPoints) / 10_000))
            lines[i] = PriceLine(
                kind: "serviceFee", label: lines[i].label, amount: Money(amountMinor: fee, currency: c),
                reason: fee == lines[i].amount.amountMinor ? nil : "Follows the adjusted basket")
        }
        return PriceBreakdown(lines: lines, currency: c)
    }

    /// Whether a cancellation by the customer costs the fee: after the provider was assigned, past the grace period and
    /// with the provider making progress toward pickup; or a no-show after waiting at pickup long enough.
    public static func cancellationFee(
        assignedAt: Date?, arrivedAt: Date?, cancelledAt: Date, providerProgressed: Bool, rules: PricingRules
    ) -> Money? {
        let rule = rules.cancellation
        let fee = Money(amountMinor: rule.feeMinor, currency: rules.currency)
        if let arrivedAt { return cancelledAt.timeIntervalSince(arrivedAt) >= rule.noShowSeconds ? fee : nil }
        guard let assignedAt, cancelledAt.timeIntervalSince(assignedAt) > rule.graceSeconds, providerProgressed else {
            return nil
        }
        return fee
    }

    /// The provider's earning out of `amount` (the platform keeps the rest).
    public static func providerShare(of amount: Int, rules: PricingRules) -> Int {
        round(Double(amount) * Double(rules.providerShareBasisPoints) / 10_000)
    }
}
