import Foundation
import Testing
@testable import EnRouteDomain

/// The ledger's builders: every movement balances, earnings split in three, nothing is written for nothing.
@Suite struct LedgerTests {
    static let at = Date(timeIntervalSince1970: 1_792_520_000)
    static func sum(_ rows: [LedgerEntry]) -> Int { rows.reduce(0) { $0 + $1.amountMinor } }

    struct MoveCase: Sendable, CustomTestStringConvertible {
        let kind: String, from: String, to: String, amount: Int
        var testDescription: String { "\(kind) \(amount) \(from) → \(to)" }
    }

    // Every kind of movement the service writes, with the accounts it writes it between.
    @Test(arguments: [
        MoveCase(kind: "hold", from: Ledger.card("c1"), to: Ledger.hold("c1"), amount: 1100),
        MoveCase(kind: "capture", from: Ledger.hold("c1"), to: Ledger.trip("T1"), amount: 900),
        MoveCase(kind: "release", from: Ledger.hold("c1"), to: Ledger.card("c1"), amount: 200),
        MoveCase(kind: "fee", from: Ledger.hold("c1"), to: Ledger.trip("T1"), amount: 500),
        MoveCase(kind: "charge", from: Ledger.card("c1"), to: Ledger.trip("T1"), amount: 1),
        MoveCase(kind: "debt", from: Ledger.owed("c1"), to: Ledger.trip("T1"), amount: 300),
        MoveCase(kind: "settlement", from: Ledger.card("c1"), to: Ledger.owed("c1"), amount: 300),
        MoveCase(kind: "tip", from: Ledger.card("c1"), to: Ledger.provider("p1"), amount: 250),
        MoveCase(kind: "refund", from: Ledger.trip("T1"), to: Ledger.card("c1"), amount: 400),
        MoveCase(kind: "refund", from: Ledger.trip("T1"), to: Ledger.card("c1"), amount: -400),
    ])
    func everyMovementIsTwoBalancedRows(_ c: MoveCase) throws {
        let rows = Ledger.move(
            c.kind, id: "\(c.kind):T1", trip: "T1", from: c.from, to: c.to, amount: c.amount, currency: "EUR",
            at: Self.at)
        try #require(rows.count == 2)
        #expect(rows[0].account == c.from && rows[0].amountMinor == -c.amount)
        #expect(rows[1].account == c.to && rows[1].amountMinor == c.amount)
        #expect(
            rows.allSatisfy {
                $0.movementId == "\(c.kind):T1" && $0.kind == c.kind && $0.tripId == "T1" && $0.currency == "EUR"
                    && $0.at == Self.at
            })
        #expect(Self.sum(rows) == 0)
        #expect(Ledger.isBalanced(rows))
        #expect(Ledger.balance(rows, account: c.from) == -c.amount)
        #expect(Ledger.balance(rows, account: c.to) == c.amount)
    }

    @Test func aZeroAmountWritesNothing() {
        #expect(
            Ledger.move(
                "release", id: "release:T1", trip: "T1", from: Ledger.hold("c1"), to: Ledger.card("c1"), amount: 0,
                currency: "EUR", at: Self.at
            ).isEmpty)
        #expect(
            Ledger.earning(
                id: "earning:T1", trip: "T1", provider: "p1", amount: 0, providerShare: 0, currency: "EUR", at: Self.at
            ).isEmpty)
        #expect(
            Ledger.earning(
                id: "earning:T1", trip: "T1", provider: nil, amount: 0, providerShare: 0, currency: "EUR", at: Self.at
            ).isEmpty)
    }

    struct EarningCase: Sendable, CustomTestStringConvertible {
        let amount: Int, share: Int
        var testDescription: String { "\(amount), provider \(share)" }
    }

    @Test(arguments: [
        EarningCase(amount: 1000, share: 750), EarningCase(amount: 1555, share: 1166), EarningCase(amount: 1, share: 1),
        EarningCase(amount: 500, share: 0), EarningCase(amount: 500, share: 500),
    ])
    func anEarningSplitsIntoThreeRowsThatSumToZero(_ c: EarningCase) throws {
        let rows = Ledger.earning(
            id: "earning:T1", trip: "T1", provider: "p1", amount: c.amount, providerShare: c.share, currency: "EUR",
            at: Self.at)
        try #require(rows.count == 3)
        #expect(rows.map(\.account) == [Ledger.trip("T1"), Ledger.provider("p1"), Ledger.platform])
        #expect(rows.map(\.amountMinor) == [-c.amount, c.share, c.amount - c.share])
        #expect(rows.allSatisfy { $0.movementId == "earning:T1" && $0.kind == "earning" && $0.tripId == "T1" })
        #expect(Self.sum(rows) == 0)
        #expect(Ledger.isBalanced(rows))
    }

    @Test func anEarningWithoutAProviderGoesWholeToThePlatform() throws {
        let rows = Ledger.earning(
            id: "earning:T1", trip: "T1", provider: nil, amount: 700, providerShare: 525, currency: "EUR", at: Self.at)
        #expect(rows.map(\.account) == [Ledger.trip("T1"), Ledger.platform])
        #expect(rows.map(\.amountMinor) == [-700, 700])
        #expect(Ledger.isBalanced(rows))
    }

    @Test func isBalancedFindsAMovementThatDoesNotSumToZero() {
        let good = Ledger.move(
            "capture", id: "capture:T1", trip: "T1", from: Ledger.hold("c1"), to: Ledger.trip("T1"), amount: 900,
            currency: "EUR", at: Self.at)
        #expect(Ledger.isBalanced(good))
        #expect(Ledger.isBalanced([]))
        // One row lost.
        #expect(!Ledger.isBalanced(Array(good.dropLast())))
        // One row's amount wrong.
        let wrong = LedgerEntry(
            movementId: "capture:T1", kind: "capture", tripId: "T1", account: Ledger.trip("T1"), amountMinor: 901,
            currency: "EUR", at: Self.at)
        #expect(!Ledger.isBalanced([good[0], wrong]))
        // Two movements each off by the other's amount: the whole sums to zero, each movement does not.
        let a = LedgerEntry(
            movementId: "a", kind: "capture", tripId: "T1", account: Ledger.trip("T1"), amountMinor: 100,
            currency: "EUR", at: Self.at)
        let b = LedgerEntry(
            movementId: "b", kind: "release", tripId: "T1", account: Ledger.card("c1"), amountMinor: -100,
            currency: "EUR", at: Self.at)
        #expect(Self.sum([a, b]) == 0)
        #expect(!Ledger.isBalanced([a, b]))
    }

    @Test func aWholeTripBalancesAndEachAccountHoldsWhatItShould() {
        // Hold 1100; capture 900 of it, release 200; a charge of 150 above the hold; 1050 earned, 788 to the provider
        // (1050 × 75 % = 787.5 → 788); a tip of 200 to the provider.
        let c = "c1", t = "T1", money = "EUR"
        var rows = Ledger.move(
            "hold", id: "hold:T1", trip: t, from: Ledger.card(c), to: Ledger.hold(c), amount: 1100, currency: money,
            at: Self.at)
        rows += Ledger.move(
            "capture", id: "capture:T1", trip: t, from: Ledger.hold(c), to: Ledger.trip(t), amount: 900,
            currency: money, at: Self.at)
        rows += Ledger.move(
            "release", id: "release:T1", trip: t, from: Ledger.hold(c), to: Ledger.card(c), amount: 200,
            currency: money, at: Self.at)
        rows += Ledger.move(
            "charge", id: "charge:T1", trip: t, from: Ledger.card(c), to: Ledger.trip(t), amount: 150, currency: money,
            at: Self.at)
        rows += Ledger.earning(
            id: "earning:T1", trip: t, provider: "p1", amount: 1050,
            providerShare: Pricing.providerShare(of: 1050, rules: PricingRules()),
            currency: money, at: Self.at)
        rows += Ledger.move(
            "tip", id: "tip:T1", trip: t, from: Ledger.card(c), to: Ledger.provider("p1"), amount: 200, currency: money,
            at: Self.at)
        #expect(Ledger.isBalanced(rows))
        #expect(Self.sum(rows) == 0)
        #expect(Ledger.balance(rows, account: Ledger.card(c)) == -1100 + 200 - 150 - 200)  // −1250 paid in all
        #expect(Ledger.balance(rows, account: Ledger.hold(c)) == 0)
        #expect(Ledger.balance(rows, account: Ledger.trip(t)) == 0)
        #expect(Ledger.balance(rows, account: Ledger.provider("p1")) == 788 + 200)
        #expect(Ledger.balance(rows, account: Ledger.platform) == 262)
        #expect(Ledger.balance(rows, account: Ledger.owed(c)) == 0)
        #expect(Ledger.balance(rows, account: "nobody") == 0)
    }

    @Test func aDebtAndItsSettlementLeaveNothingOwed() {
        let c = "c1", t = "T1"
        var rows = Ledger.move(
            "debt", id: "debt:T1", trip: t, from: Ledger.owed(c), to: Ledger.trip(t), amount: 300, currency: "EUR",
            at: Self.at)
        #expect(Ledger.balance(rows, account: Ledger.owed(c)) == -300)
        rows += Ledger.move(
            "settlement", id: "settle:T1:k", trip: t, from: Ledger.card(c), to: Ledger.owed(c), amount: 300,
            currency: "EUR", at: Self.at)
        #expect(Ledger.balance(rows, account: Ledger.owed(c)) == 0)
        #expect(Ledger.balance(rows, account: Ledger.card(c)) == -300)
        #expect(Ledger.isBalanced(rows))
    }

    @Test func accountNamesFollowTheDocumentedShapes() {
        #expect(Ledger.card("c1") == "customer:c1:card")
        #expect(Ledger.hold("c1") == "customer:c1:hold")
        #expect(Ledger.owed("c1") == "customer:c1:owed")
        #expect(Ledger.trip("T1") == "trip:T1")
        #expect(Ledger.provider("p1") == "provider:p1")
        #expect(Ledger.platform == "platform")
    }
}
