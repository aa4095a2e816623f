import Foundation
import Testing
import EnRouteModels
@testable import EnRouteDomain

/// Every price rule in a table, with the exact minor units worked out by hand in the comments. Default rules: economy
/// 300 + 110/km + 25/min, minimum 700, 3 free wait minutes then 30/min; xl 480 + 176/km + 40/min, minimum 1100, 45/wait
/// minute; delivery 199 + 50/km, service 5 % (at least 50), 200 under a basket of 1000; cancellation 500 after 120 s of
/// grace, no-show after 300 s; the provider's share 75 %.
@Suite struct PricingTests {
    static let rules = PricingRules()
    static func eur(_ minor: Int) -> Money { Money(amountMinor: minor, currency: "EUR") }

    /// The line kinds and amounts of a breakdown, in order.
    static func amounts(_ b: PriceBreakdown) -> [String] { b.lines.map { "\($0.kind) \($0.amount.amountMinor)" } }

    /// A total is the sum of its lines, all in the rules' currency.
    static func expectAddsUp(_ b: PriceBreakdown, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(b.total.amountMinor == b.lines.reduce(0) { $0 + $1.amount.amountMinor }, sourceLocation: sourceLocation)
        #expect(
            b.lines.allSatisfy { $0.amount.currency == "EUR" } && b.total.currency == "EUR",
            sourceLocation: sourceLocation)
    }

    // MARK: - Rounding

    struct RoundCase: Sendable, CustomTestStringConvertible {
        let value: Double, minor: Int
        var testDescription: String { "\(value) → \(minor)" }
    }

    @Test(arguments: [
        RoundCase(value: 0, minor: 0), RoundCase(value: 1, minor: 1), RoundCase(value: 0.5, minor: 1),
        RoundCase(value: -0.5, minor: -1),
        RoundCase(value: 2.5, minor: 3), RoundCase(value: -2.5, minor: -3), RoundCase(value: 2.4999, minor: 2),
        RoundCase(value: 994.5, minor: 995),
        RoundCase(value: 126.49, minor: 126), RoundCase(value: 126.51, minor: 127),
    ])
    func roundingIsHalfAwayFromZero(_ c: RoundCase) {
        #expect(Pricing.round(c.value) == c.minor)
    }

    // MARK: - Rides

    struct RideCase: Sendable, CustomTestStringConvertible {
        let name: String, product: String, meters: Double, seconds: Double, demand: Double
        /// nil: an unknown product.
        let lines: [String]?
        var testDescription: String { name }
    }

    @Test(arguments: [
        // 300 + 5 km × 110 = 550 + 10 min × 25 = 250 → 1100
        RideCase(
            name: "economy, calm", product: "economy", meters: 5000, seconds: 600, demand: 1,
            lines: ["base 300", "distance 550", "time 250"]),
        // 480 + 5 × 176 = 880 + 10 × 40 = 400 → 1760
        RideCase(
            name: "xl, calm", product: "xl", meters: 5000, seconds: 600, demand: 1,
            lines: ["base 480", "distance 880", "time 400"]),
        // 1100, then busy ×1.5: 1100 × 0.5 = 550 → 1650
        RideCase(
            name: "economy, busy ×1.5", product: "economy", meters: 5000, seconds: 600, demand: 1.5,
            lines: ["base 300", "distance 550", "time 250", "demand 550"]),
        // A multiplier of 1.0 adds no line at all.
        RideCase(
            name: "demand 1.0 adds no line", product: "economy", meters: 5000, seconds: 600, demand: 1.0,
            lines: ["base 300", "distance 550", "time 250"]),
        // 300 + 1 × 110 + 2 × 25 = 460 < 700 → minimum fare 240
        RideCase(
            name: "economy under the minimum", product: "economy", meters: 1000, seconds: 120, demand: 1,
            lines: ["base 300", "distance 110", "time 50", "minimumFare 240"]),
        // 480 + 176 + 80 = 736 < 1100 → 364
        RideCase(
            name: "xl under the minimum", product: "xl", meters: 1000, seconds: 120, demand: 1,
            lines: ["base 480", "distance 176", "time 80", "minimumFare 364"]),
        // 460, busy ×1.2: 460 × 0.2 = 92 → 552 < 700 → 148: the minimum applies after the demand line
        RideCase(
            name: "busy but still under the minimum", product: "economy", meters: 1000, seconds: 120, demand: 1.2,
            lines: ["base 300", "distance 110", "time 50", "demand 92", "minimumFare 148"]),
        // Nothing driven: 300 → 400 to the minimum
        RideCase(
            name: "zero distance and time", product: "economy", meters: 0, seconds: 0, demand: 1,
            lines: ["base 300", "distance 0", "time 0", "minimumFare 400"]),
        // Negative measurements count as zero
        RideCase(
            name: "negative distance and time", product: "economy", meters: -500, seconds: -60, demand: 1,
            lines: ["base 300", "distance 0", "time 0", "minimumFare 400"]),
        // Half away from zero on the distance: 1.15 km × 110 = 126.5 → 127; 30 min × 25 = 750 → 1177
        RideCase(
            name: "distance at .5 rounds up", product: "economy", meters: 1150, seconds: 1800, demand: 1,
            lines: ["base 300", "distance 127", "time 750"]),
        // 2.05 km × 110 = 225.5 → 226; 20 min × 25 = 500 → 1026
        RideCase(
            name: "distance 2.05 km at .5", product: "economy", meters: 2050, seconds: 1200, demand: 1,
            lines: ["base 300", "distance 226", "time 500"]),
        // Half away from zero on the time: 8 km × 110 = 880; 138 s = 2.3 min × 25 = 57.5 → 58 → 1238
        RideCase(
            name: "time at .5 rounds up", product: "economy", meters: 8000, seconds: 138, demand: 1,
            lines: ["base 300", "distance 880", "time 58"]),
        // 300 + 550 + 612 s = 10.2 min × 25 = 255 → 1105; busy ×1.9: 1105 × 0.9 = 994.5 → 995 → 2100
        RideCase(
            name: "demand at .5 rounds up", product: "economy", meters: 5000, seconds: 612, demand: 1.9,
            lines: ["base 300", "distance 550", "time 255", "demand 995"]),
        // 1285 = 300 + 550 + 435 (1044 s = 17.4 min × 25); ×1.7: 1285 × 0.7 = 899.5 → 900
        RideCase(
            name: "demand ×1.7 at .5 rounds up", product: "economy", meters: 5000, seconds: 1044, demand: 1.7,
            lines: ["base 300", "distance 550", "time 435", "demand 900"]),
        RideCase(name: "unknown product", product: "limousine", meters: 5000, seconds: 600, demand: 1, lines: nil),
    ])
    func ridePrices(_ c: RideCase) {
        let price = Pricing.ride(
            product: c.product, distanceMeters: c.meters, durationSeconds: c.seconds, demand: c.demand,
            rules: Self.rules)
        guard let lines = c.lines else { #expect(price == nil); return }
        guard let price else { Issue.record("no price"); return }
        #expect(Self.amounts(price) == lines)
        Self.expectAddsUp(price)
    }

    @Test func rideLinesAreLabelledForAPerson() throws {
        let price = try #require(
            Pricing.ride(product: "economy", distanceMeters: 4200, durationSeconds: 630, demand: 1.3, rules: Self.rules)
        )
        #expect(price.lines.map(\.label) == ["Base fare", "Distance 4.2 km", "Time 11 min", "Busy time ×1.3"])
    }

    @Test func aRuleOfOneMinorUnitPerKilometreAndMinuteShowsTheRounding() throws {
        // 2.5 km × 1 = 2.5 → 3 (banker's rounding would say 2); 150 s = 2.5 min × 1 → 3; 3.5 km → 4; 90 s = 1.5 min →
        // 2.
        var rules = PricingRules()
        rules.products = ["unit": FareRule(baseMinor: 0, perKmMinor: 1, perMinuteMinor: 1, minimumMinor: 0)]
        let a = try #require(
            Pricing.ride(product: "unit", distanceMeters: 2500, durationSeconds: 150, demand: 1, rules: rules))
        #expect(Self.amounts(a) == ["base 0", "distance 3", "time 3"])
        let b = try #require(
            Pricing.ride(product: "unit", distanceMeters: 3500, durationSeconds: 90, demand: 1, rules: rules))
        #expect(Self.amounts(b) == ["base 0", "distance 4", "time 2"])
    }

    // MARK: - Demand

    struct DemandCase: Sendable, CustomTestStringConvertible {
        let open: Int, online: Int, multiplier: Double
        var testDescription: String { "\(open) open / \(online) online → ×\(multiplier)" }
    }

    // 1 + max(0, open/online − 1) × 0.5, down to a step of 0.1, at most 2.
    @Test(arguments: [
        DemandCase(open: 0, online: 5, multiplier: 1.0),  // calm: nobody asking
        DemandCase(open: 3, online: 5, multiplier: 1.0),  // 0.6 per provider: under the threshold
        DemandCase(open: 5, online: 5, multiplier: 1.0),  // 1.0: at the threshold
        DemandCase(open: 11, online: 10, multiplier: 1.0),  // 1.1 → 1.05 → down to 1.0
        DemandCase(open: 6, online: 5, multiplier: 1.1),  // 1.2 → 1 + 0.2 × 0.5 = 1.1
        DemandCase(open: 7, online: 5, multiplier: 1.2),  // 1.4 → 1.2
        DemandCase(open: 9, online: 5, multiplier: 1.4),  // 1.8 → 1.4
        DemandCase(open: 13, online: 5, multiplier: 1.8),  // 2.6 → 1.8
        DemandCase(open: 14, online: 5, multiplier: 1.9),  // 2.8 → 1.9
        DemandCase(open: 15, online: 5, multiplier: 2.0),  // 3.0 → 2.0: the cap exactly
        DemandCase(open: 50, online: 5, multiplier: 2.0),  // 10 → 5.5 → capped at 2.0
        DemandCase(open: 2, online: 0, multiplier: 1.5),  // no provider counts as one: 2 → 1.5
        DemandCase(open: 1, online: 0, multiplier: 1.0),  // 1 / 1 → at the threshold
        DemandCase(open: 0, online: 0, multiplier: 1.0),  // nothing at all
    ])
    func demandMultiplier(_ c: DemandCase) {
        #expect(DemandRule().multiplier(open: c.open, online: c.online) == c.multiplier)
    }

    @Test func demandRuleHonoursItsThresholdSlopeAndCap() {
        var rule = DemandRule()
        rule.threshold = 2; rule.slope = 1; rule.cap = 3
        #expect(rule.multiplier(open: 4, online: 2) == 1.0)  // 2: at the threshold
        #expect(rule.multiplier(open: 5, online: 2) == 1.5)  // 2.5 → 1 + 0.5 × 1
        #expect(rule.multiplier(open: 8, online: 2) == 3.0)  // 4 → 3.0, the cap
        #expect(rule.multiplier(open: 20, online: 2) == 3.0)  // 10 → 9 → 3.0
    }

    // MARK: - Baskets

    struct BasketCase: Sendable, CustomTestStringConvertible {
        let name: String
        let items: [(String, Int, Int)]  // sku, quantity, unit
        let meters: Double
        let lines: [String], fees: [String], total: Int
        var testDescription: String { name }
    }

    @Test(arguments: [
        // 2 × 350 + 420 = 1120; delivery 199 + 2 km × 50 = 299; service 5 % = 56; ≥ 1000 so no small-basket fee → 1475
        BasketCase(
            name: "two lines", items: [("coffee", 2, 350), ("bread", 1, 420)], meters: 2000,
            lines: ["item 700", "item 420"], fees: ["deliveryFee 299", "serviceFee 56"], total: 1475),
        // 300; 199 + 1.5 × 50 = 274; 5 % = 15 → minimum 50; under 1000 → 200 → 824
        BasketCase(
            name: "small basket", items: [("tea", 1, 300)], meters: 1500,
            lines: ["item 300"], fees: ["deliveryFee 274", "serviceFee 50", "smallBasketFee 200"], total: 824),
        // 1000 exactly is not small; 5 % = 50 = the minimum; 0 km → 199 → 1249
        BasketCase(
            name: "at the small-basket threshold", items: [("x", 2, 500)], meters: 0,
            lines: ["item 1000"], fees: ["deliveryFee 199", "serviceFee 50"], total: 1249),
        // 999 is small; 5 % = 49.95 → 50; → 999 + 199 + 50 + 200 = 1448
        BasketCase(
            name: "one under the threshold", items: [("x", 3, 333)], meters: 0,
            lines: ["item 999"], fees: ["deliveryFee 199", "serviceFee 50", "smallBasketFee 200"], total: 1448),
        // 1230 × 5 % = 61.5 → 62; 199 + 3.3 × 50 = 165 → 364 → 1656
        BasketCase(
            name: "service fee at .5", items: [("x", 1, 1230)], meters: 3300,
            lines: ["item 1230"], fees: ["deliveryFee 364", "serviceFee 62"], total: 1656),
        // 1.01 km × 50 = 50.5 → 51 → 250; 2000 × 5 % = 100 → 2350
        BasketCase(
            name: "delivery fee at .5", items: [("x", 1, 2000)], meters: 1010,
            lines: ["item 2000"], fees: ["deliveryFee 250", "serviceFee 100"], total: 2350),
        // 4000 × 5 % = 200; 199 + 12.345 km × 50 = 617.25 → 617 → 816 → 5016
        BasketCase(
            name: "a long way", items: [("x", 4, 1000)], meters: 12345,
            lines: ["item 4000"], fees: ["deliveryFee 816", "serviceFee 200"], total: 5016),
    ])
    func basketPrices(_ c: BasketCase) {
        let items = c.items.map { (sku: $0.0, name: $0.0.capitalized, quantity: $0.1, unit: Self.eur($0.2)) }
        let basket = Pricing.basket(items: items, distanceMeters: c.meters, rules: Self.rules)
        #expect(basket.lines.map { "\($0.kind) \($0.amount.amountMinor)" } == c.lines)
        #expect(basket.fees.map { "\($0.kind) \($0.amount.amountMinor)" } == c.fees)
        #expect(basket.total == Self.eur(c.total))
        #expect(basket.total.amountMinor == (basket.lines + basket.fees).reduce(0) { $0 + $1.amount.amountMinor })
        #expect(basket.lines.map(\.sku) == c.items.map(\.0))
        #expect(basket.lines.map(\.quantity) == c.items.map(\.1))
    }

    @Test func basketItemLinesNameQuantityAndItem() {
        let basket = Pricing.basket(
            items: [(sku: "coffee", name: "Filter coffee", quantity: 2, unit: Self.eur(350))], distanceMeters: 0,
            rules: Self.rules)
        #expect(basket.lines.map(\.label) == ["2 × Filter coffee"])
    }

    // MARK: - Final ride price

    /// The quote: economy, 5 km, 10 min, calm → 300 + 550 + 250 = 1100.
    static let rideQuote = Pricing.ride(
        product: "economy", distanceMeters: 5000, durationSeconds: 600, demand: 1, rules: rules)!

    struct FinalRideCase: Sendable, CustomTestStringConvertible {
        let name: String, product: String, demand: Double
        let changed: Bool, wait: TimeInterval, meters: Double, seconds: Double
        /// nil: the quote is kept as it stands.
        let lines: [String]?
        let reason: String?
        var testDescription: String { name }
    }

    static let destinationChanged = "Destination changed: priced on the distance and time driven"
    static let longWait = "Long wait at pickup: priced on the distance and time driven"

    @Test(arguments: [
        // No change, 2 min wait (3 free): the fixed quote, whatever was driven.
        FinalRideCase(
            name: "fixed quote kept", product: "economy", demand: 1, changed: false, wait: 120, meters: 9000,
            seconds: 1500, lines: nil, reason: nil),
        // 180 s is the free wait exactly, not beyond it.
        FinalRideCase(
            name: "wait of exactly the free minutes", product: "economy", demand: 1, changed: false, wait: 180,
            meters: 9000, seconds: 1500, lines: nil, reason: nil),
        // Destination changed: 300 + 8 × 110 = 880 + 15 × 25 = 375 → 1555, no wait line.
        FinalRideCase(
            name: "destination changed → measured", product: "economy", demand: 1, changed: true, wait: 60,
            meters: 8000, seconds: 900,
            lines: ["base 300", "distance 880", "time 375"], reason: destinationChanged),
        // A shorter measured ride than quoted is what is charged: 300 + 220 + 100 = 620 → minimum 80 → 700.
        FinalRideCase(
            name: "destination changed to a shorter ride", product: "economy", demand: 1, changed: true, wait: 0,
            meters: 2000, seconds: 240,
            lines: ["base 300", "distance 220", "time 100", "minimumFare 80"], reason: destinationChanged),
        // Waited 200 s: 20 s beyond → ceil → 1 min × 30; 300 + 5.2 × 110 = 572 + 11 × 25 = 275 → 1147 + 30 = 1177.
        FinalRideCase(
            name: "wait 20 s beyond → 1 paid minute", product: "economy", demand: 1, changed: false, wait: 200,
            meters: 5200, seconds: 660,
            lines: ["base 300", "distance 572", "time 275", "wait 30"], reason: longWait),
        // Waited 300 s: 120 s beyond → exactly 2 min × 30 = 60 → 1100 + 60 = 1160.
        FinalRideCase(
            name: "wait 120 s beyond → 2 paid minutes", product: "economy", demand: 1, changed: false, wait: 300,
            meters: 5000, seconds: 600,
            lines: ["base 300", "distance 550", "time 250", "wait 60"], reason: longWait),
        // Both: 241 s → 61 s beyond → 2 min → 60; 1555 + 60 = 1615; the destination is the reason of the measured
        // lines.
        FinalRideCase(
            name: "destination changed and a long wait", product: "economy", demand: 1, changed: true, wait: 241,
            meters: 8000, seconds: 900,
            lines: ["base 300", "distance 880", "time 375", "wait 60"], reason: destinationChanged),
        // The quote's demand still applies: 1555 × 0.5 = 777.5 → 778 → 2333.
        FinalRideCase(
            name: "measured under the quote's demand", product: "economy", demand: 1.5, changed: true, wait: 0,
            meters: 8000, seconds: 900,
            lines: ["base 300", "distance 880", "time 375", "demand 778"], reason: destinationChanged),
        // xl's wait costs 45: 400 s → 220 s beyond → 4 min → 180; 480 + 880 + 400 = 1760 → 1940.
        FinalRideCase(
            name: "xl wait at its own rate", product: "xl", demand: 1, changed: false, wait: 400, meters: 5000,
            seconds: 600,
            lines: ["base 480", "distance 880", "time 400", "wait 180"], reason: longWait),
        // An unknown product keeps the quote.
        FinalRideCase(
            name: "unknown product keeps the quote", product: "limousine", demand: 1, changed: true, wait: 900,
            meters: 8000, seconds: 900, lines: nil, reason: nil),
    ])
    func finalRidePrices(_ c: FinalRideCase) {
        let final = Pricing.finalRide(
            quote: Self.rideQuote, product: c.product, demand: c.demand,
            outcome: .init(
                destinationChanged: c.changed, waitSeconds: c.wait, distanceMeters: c.meters, durationSeconds: c.seconds
            ),
            rules: Self.rules)
        Self.expectAddsUp(final)
        guard let lines = c.lines else { #expect(final == Self.rideQuote); return }
        #expect(Self.amounts(final) == lines)
        // Every line says why it is not the quote.
        for line in final.lines where line.kind != "wait" { #expect(line.reason == c.reason, "\(line.kind)") }
        if let wait = final.lines.first(where: { $0.kind == "wait" }) {
            let free = Self.rules.products[c.product]!.freeWaitMinutes
            #expect(wait.reason == "Waited past the \(free) free minutes")
            let minutes = Int(((c.wait - TimeInterval(free * 60)) / 60).rounded(.up))
            #expect(wait.label == "Wait at pickup \(minutes) min")
        }
    }

    // MARK: - Final basket price

    /// The quote: 4 × coffee 350 = 1400, 2 × bread 420 = 840 → 2240; delivery 199 + 2 km × 50 = 299; service 5 % = 112
    /// → 2651.
    static let basketQuote: PriceBreakdown = {
        let b = Pricing.basket(
            items: [
                (sku: "coffee", name: "Filter coffee", quantity: 4, unit: eur(350)),
                (sku: "bread", name: "Rye bread", quantity: 2, unit: eur(420)),
            ], distanceMeters: 2000, rules: rules)
        return PriceBreakdown(lines: b.lines + b.fees, currency: "EUR")
    }()

    struct FinalBasketCase: Sendable, CustomTestStringConvertible {
        let name: String
        let changes: [Pricing.BasketChange]
        /// The adjustment lines and the service fee after them, and the total.
        let adjustments: [String], serviceFee: Int, total: Int
        var testDescription: String { name }
    }

    @Test(arguments: [
        FinalBasketCase(name: "no changes", changes: [], adjustments: [], serviceFee: 112, total: 2651),
        // All coffee missing: −1400 → 840 × 5 % = 42 → minimum 50 → 2240 − 1400 + 299 + 50 = 1189.
        FinalBasketCase(
            name: "a whole line missing", changes: [.init(sku: "coffee", kind: .missing)],
            adjustments: ["adjustment -1400"], serviceFee: 50, total: 1189),
        // 1 coffee missing: −350 → 1890 × 5 % = 94.5 → 95 → 1890 + 299 + 95 = 2284.
        FinalBasketCase(
            name: "part of a line missing", changes: [.init(sku: "coffee", kind: .missing, quantity: 1)],
            adjustments: ["adjustment -350"], serviceFee: 95, total: 2284),
        // 3 bread missing of 2: capped at 2 → −840 → 1400 × 5 % = 70 → 1400 + 299 + 70 = 1769.
        FinalBasketCase(
            name: "more missing than ordered is the whole line",
            changes: [.init(sku: "bread", kind: .missing, quantity: 3)],
            adjustments: ["adjustment -840"], serviceFee: 70, total: 1769),
        // Coffee replaced by one at 300: (300 − 350) × 4 = −200 → 2040 × 5 % = 102 → 2040 + 299 + 102 = 2441.
        FinalBasketCase(
            name: "replaced by a cheaper item lowers the price",
            changes: [.init(sku: "coffee", kind: .replaced, replacementName: "Espresso", replacementUnit: eur(300))],
            adjustments: ["adjustment -200"], serviceFee: 102, total: 2441),
        // Coffee replaced by one at 500: never more than ordered → 0 → 2651 unchanged.
        FinalBasketCase(
            name: "replaced by a dearer item never raises it",
            changes: [.init(sku: "coffee", kind: .replaced, replacementName: "Latte", replacementUnit: eur(500))],
            adjustments: ["adjustment 0"], serviceFee: 112, total: 2651),
        // A sku the quote does not have: ignored.
        FinalBasketCase(
            name: "unknown sku ignored", changes: [.init(sku: "tea", kind: .missing)], adjustments: [], serviceFee: 112,
            total: 2651),
        // Both lines changed: −350 (1 coffee) and (400 − 420) × 2 = −40 → 1850 × 5 % = 92.5 → 93 → 1850 + 299 + 93 =
        // 2242.
        FinalBasketCase(
            name: "two lines changed",
            changes: [
                .init(sku: "coffee", kind: .missing, quantity: 1),
                .init(sku: "bread", kind: .replaced, replacementName: "Oat bread", replacementUnit: eur(400)),
            ],
            adjustments: ["adjustment -350", "adjustment -40"], serviceFee: 93, total: 2242),
        // The same line changed twice: the later change counts (as the service keeps them), never both:
        // 2 coffee missing → −700 → 1540 × 5 % = 77 → 1540 + 299 + 77 = 1916.
        FinalBasketCase(
            name: "a later change of a line replaces the earlier one",
            changes: [
                .init(sku: "coffee", kind: .missing, quantity: 4), .init(sku: "coffee", kind: .missing, quantity: 2),
            ],
            adjustments: ["adjustment -700"], serviceFee: 77, total: 1916),
        // Missing, then replaced by a cheaper one: the replacement counts → −200 → 2441.
        FinalBasketCase(
            name: "missing then replaced: the replacement counts",
            changes: [
                .init(sku: "coffee", kind: .missing),
                .init(sku: "coffee", kind: .replaced, replacementName: "Espresso", replacementUnit: eur(300)),
            ],
            adjustments: ["adjustment -200"], serviceFee: 102, total: 2441),
    ])
    func finalBasketPrices(_ c: FinalBasketCase) throws {
        let final = Pricing.finalBasket(quote: Self.basketQuote, changes: c.changes, rules: Self.rules)
        Self.expectAddsUp(final)
        #expect(final.total == Self.eur(c.total))
        #expect(
            final.lines.filter { $0.kind == "adjustment" }.map { "\($0.kind) \($0.amount.amountMinor)" }
                == c.adjustments)
        let fee = try #require(final.lines.first { $0.kind == "serviceFee" })
        #expect(fee.amount.amountMinor == c.serviceFee)
        #expect(fee.reason == (c.serviceFee == 112 ? nil : "Follows the adjusted basket"))
        // The item lines and the other fees stay as quoted; no line of the basket is taken below zero.
        #expect(
            final.lines.filter { $0.kind == "item" || $0.kind == "deliveryFee" }
                == Self.basketQuote.lines.filter { $0.kind == "item" || $0.kind == "deliveryFee" })
        for item in final.lines where item.kind == "item" {
            let taken = final.lines.filter { $0.kind == "adjustment" && $0.sku == item.sku }.reduce(0) {
                $0 + $1.amount.amountMinor
            }
            #expect(item.amount.amountMinor + taken >= 0)
        }
        for adjustment in final.lines where adjustment.kind == "adjustment" {
            #expect(
                adjustment.reason
                    == (adjustment.label.hasSuffix("missing") ? "Out of stock" : "Replaced by the merchant"))
        }
        if c.changes.isEmpty { #expect(final == Self.basketQuote) }
    }

    // MARK: - Cancellation and no-show

    struct CancelCase: Sendable, CustomTestStringConvertible {
        let name: String
        /// Seconds from the trip's start to the assignment and the arrival at pickup; nil when it did not happen.
        let assigned: TimeInterval?, arrived: TimeInterval?
        let cancelled: TimeInterval
        let progressed: Bool
        let fee: Int?
        var testDescription: String { name }
    }

    @Test(arguments: [
        CancelCase(
            name: "before any provider", assigned: nil, arrived: nil, cancelled: 600, progressed: false, fee: nil),
        CancelCase(
            name: "inside the grace period", assigned: 0, arrived: nil, cancelled: 60, progressed: true, fee: nil),
        CancelCase(
            name: "at the end of the grace period", assigned: 0, arrived: nil, cancelled: 120, progressed: true,
            fee: nil),
        CancelCase(
            name: "past grace with progress", assigned: 0, arrived: nil, cancelled: 121, progressed: true, fee: 500),
        CancelCase(
            name: "long past grace with progress", assigned: 0, arrived: nil, cancelled: 900, progressed: true, fee: 500
        ),
        CancelCase(
            name: "past grace without progress", assigned: 0, arrived: nil, cancelled: 900, progressed: false,
            fee: nil),
        CancelCase(name: "no-show before 5 min", assigned: 0, arrived: 200, cancelled: 499, progressed: true, fee: nil),
        CancelCase(name: "no-show at 5 min", assigned: 0, arrived: 200, cancelled: 500, progressed: false, fee: 500),
        CancelCase(name: "no-show after 5 min", assigned: 0, arrived: 200, cancelled: 800, progressed: false, fee: 500),
    ])
    func cancellationFees(_ c: CancelCase) {
        let t0 = Date(timeIntervalSince1970: 1_792_520_000)
        let fee = Pricing.cancellationFee(
            assignedAt: c.assigned.map(t0.addingTimeInterval), arrivedAt: c.arrived.map(t0.addingTimeInterval),
            cancelledAt: t0.addingTimeInterval(c.cancelled), providerProgressed: c.progressed, rules: Self.rules)
        #expect(fee == c.fee.map(Self.eur))
    }

    // MARK: - The provider's share

    struct ShareCase: Sendable, CustomTestStringConvertible {
        let amount: Int, basisPoints: Int, share: Int
        var testDescription: String { "\(basisPoints) bp of \(amount) → \(share)" }
    }

    @Test(arguments: [
        ShareCase(amount: 1000, basisPoints: 7500, share: 750),
        ShareCase(amount: 1555, basisPoints: 7500, share: 1166),  // 1166.25
        ShareCase(amount: 1002, basisPoints: 7500, share: 752),  // 751.5 → 752
        ShareCase(amount: 2, basisPoints: 7500, share: 2),  // 1.5 → 2
        ShareCase(amount: 1, basisPoints: 7500, share: 1),  // 0.75 → 1
        ShareCase(amount: 0, basisPoints: 7500, share: 0),
        ShareCase(amount: 999, basisPoints: 8000, share: 799),  // 799.2
        ShareCase(amount: 1000, basisPoints: 10_000, share: 1000),
        ShareCase(amount: 1000, basisPoints: 0, share: 0),
    ])
    func providerShares(_ c: ShareCase) {
        var rules = PricingRules()
        rules.providerShareBasisPoints = c.basisPoints
        #expect(Pricing.providerShare(of: c.amount, rules: rules) == c.share)
    }
}
