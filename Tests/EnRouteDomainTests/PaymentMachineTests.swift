import Foundation
import Testing
import EnRouteModels
@testable import EnRouteDomain

/// Every payment state × every payment event, with representative amounts: what each leaves or that it is refused. The
/// table is written out independently of the machine and must have a row for every pair.
@Suite struct PaymentMachineTests {
    static let hold = 1000
    static let owed = 300
    static let at = Date(timeIntervalSince1970: 1_792_520_000)
    static let challengeURL = URL(string: "https://bank.example/challenge/1")!
    static let decline = GatewayDecline(
        code: "card_declined", declineCode: "insufficient_funds", message: "Your card has insufficient funds.")

    /// The case of an event, by an exhaustive switch: a new `PaymentEvent` case does not compile until it is named
    /// here,
    /// and `everyEventCaseHasAnEventInTheTable` then fails until the table has events of it.
    static func caseName(_ event: PaymentEvent) -> String {
        switch event {
        case .authorized: "authorized"
        case .challenged: "challenged"
        case .declined: "declined"
        case .captured: "captured"
        case .released: "released"
        case .charged: "charged"
        case .chargeFailed: "chargeFailed"
        case .settled: "settled"
        case .confirmed: "confirmed"
        }
    }
    static let eventCases = [
        "authorized", "challenged", "declined", "captured", "released", "charged", "chargeFailed", "settled",
        "confirmed",
    ]

    /// The events of the table, with amounts against a hold of 1000 and a debt of 300: zero, equal, below, above.
    static let events: [(String, PaymentEvent)] = [
        ("auth", .authorized(intentId: "pi_2", amountMinor: hold)),
        ("authBelow", .authorized(intentId: "pi_2", amountMinor: 800)),
        ("challenge", .challenged(intentId: "pi_2", url: challengeURL)),
        ("decline", .declined(decline)),
        ("capture0", .captured(amountMinor: 0)),
        ("captureAll", .captured(amountMinor: hold)),
        ("captureBelow", .captured(amountMinor: 600)),
        ("captureAbove", .captured(amountMinor: 1200)),
        ("captureNegative", .captured(amountMinor: -1)),
        ("release", .released),
        ("charge0", .charged(amountMinor: 0)),
        ("charge", .charged(amountMinor: 200)),
        ("chargeNegative", .charged(amountMinor: -200)),
        ("chargeFail0", .chargeFailed(amountMinor: 0, decline)),
        ("chargeFail", .chargeFailed(amountMinor: owed, decline)),
        ("settle0", .settled(amountMinor: 0)),
        ("settleOwed", .settled(amountMinor: owed)),
        ("settleBelow", .settled(amountMinor: 100)),
        ("settleAbove", .settled(amountMinor: 500)),
        ("confirm", .confirmed(at: at)),
    ]

    /// The table: per state, the state each event leaves, in the order of `events`; "-" is a refusal.
    static let table: [PaymentStatus: [String]] = [
        // auth authBelow challenge decline capture0 captureAll captureBelow captureAbove captureNegative release
        // charge0 charge chargeNegative chargeFail0 chargeFail settle0 settleOwed settleBelow settleAbove confirm
        .authorizing: [
            "held", "held", "actionRequired", "failed", "-", "-", "-", "-", "-", "released", "-", "-", "-", "-", "-",
            "-", "-", "-", "-", "-",
        ],
        // The same challenge again is refused: the service answers it as the unanswered challenge it is.
        .actionRequired: [
            "held", "held", "-", "failed", "-", "-", "-", "-", "-", "released", "-", "-", "-", "-", "-", "-", "-", "-",
            "-", "-",
        ],
        // Never a second hold; a capture of nothing is a release; a capture above the hold is refused.
        .held: [
            "-", "-", "-", "-", "released", "captured", "partiallyCaptured", "-", "-", "released", "-", "-", "-", "-",
            "-", "-", "-", "-", "-", "-",
        ],
        // A final price above the hold: the difference charged, or owed when that charge fails.
        .captured: [
            "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "captured", "-", "-", "debt", "-", "-", "-", "-",
            "captured",
        ],
        .partiallyCaptured: [
            "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-",
            "partiallyCaptured",
        ],
        .released: [
            "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-",
        ],
        .failed: ["-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-"],
        // Only the whole debt settles it.
        .debt: [
            "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "captured", "-", "-",
            "debt",
        ],
    ]

    /// A payment in `state` as the machine would have left it: a hold of 1000 on `pi_1`, captured as the state says,
    /// 300 owed in debt.
    static func payment(_ state: PaymentStatus) -> TripPayment {
        var p = TripPayment(
            state: state, gateway: "sandbox", intentId: state == .authorizing ? nil : "pi_1", methodId: "pm_saved",
            card: CardSummary(brand: "visa", last4: "4242"), currency: "EUR", heldMinor: hold)
        p.version = 4
        switch state {
        case .actionRequired: p.actionURL = challengeURL
        case .captured: p.capturedMinor = hold
        case .partiallyCaptured: p.capturedMinor = 600
        case .failed: p.decline = decline
        case .debt: p.capturedMinor = hold; p.owedMinor = owed; p.decline = decline
        case .authorizing, .held, .released: break
        }
        return p
    }

    /// What a successful event does to the amounts and details, written out per event (the state is the table's).
    static func expected(_ label: String, from p: TripPayment, to state: PaymentStatus) -> TripPayment {
        var e = p
        e.state = state
        e.version = p.version + 1
        switch label {
        case "auth": e.intentId = "pi_2"; e.heldMinor = hold; e.actionURL = nil; e.decline = nil
        case "authBelow": e.intentId = "pi_2"; e.heldMinor = 800; e.actionURL = nil; e.decline = nil
        case "challenge": e.intentId = "pi_2"; e.actionURL = challengeURL
        case "decline": e.decline = decline; e.actionURL = nil
        case "capture0": break
        case "captureAll": e.capturedMinor = hold
        case "captureBelow": e.capturedMinor = 600
        case "release": e.actionURL = nil
        case "charge": e.capturedMinor = p.capturedMinor + 200
        case "chargeFail": e.owedMinor = p.owedMinor + owed; e.decline = decline
        case "settleOwed": e.capturedMinor = p.capturedMinor + owed; e.owedMinor = 0; e.decline = nil
        case "confirm": e.paidAt = at
        default: Issue.record("no expectation written for \(label)")
        }
        return e
    }

    @Test func theTableHasARowForEveryStateAndACellForEveryEvent() {
        for state in PaymentStatus.allCases {
            let row = Self.table[state]
            #expect(row != nil, "no row for \(state)")
            #expect(
                row?.count == Self.events.count,
                "row \(state) has \(row?.count ?? 0) cells for \(Self.events.count) events")
            for cell in row ?? [] where cell != "-" {
                #expect(PaymentStatus(rawValue: cell) != nil, "row \(state): \(cell) is not a state")
            }
        }
        #expect(Self.table.count == PaymentStatus.allCases.count)
    }

    @Test func everyEventCaseHasAnEventInTheTable() {
        let covered = Set(Self.events.map { Self.caseName($0.1) })
        #expect(covered == Set(Self.eventCases))
    }

    @Test(arguments: PaymentStatus.allCases)
    func everyEventFollowsTheTable(from state: PaymentStatus) {
        guard let row = Self.table[state], row.count == Self.events.count else {
            Issue.record("no full row for \(state)"); return
        }
        for ((label, event), cell) in zip(Self.events, row) {
            let before = Self.payment(state)
            let copy = before
            let result = PaymentMachine.apply(event, to: before)
            #expect(before == copy)
            switch (result, PaymentStatus(rawValue: cell)) {
            case (.success(let next), let to?):
                // Exactly the fields the event changes, and the version one up.
                #expect(next == Self.expected(label, from: before, to: to), "\(state) + \(label)")
                #expect(next.version == before.version + 1)
            case (.success(let next), nil):
                Issue.record("\(state) + \(label) was allowed (to \(next.state)); the table refuses it")
            case (.failure(let refusal), let to?):
                Issue.record("\(state) + \(label) was refused (\(refusal.reason)); the table says \(to)")
            case (.failure(let refusal), nil):
                #expect(refusal.reason.contains(state.rawValue), "\(state) + \(label): \(refusal.reason)")
            }
        }
    }

    @Test func aSecondConfirmationIsRefusedAndChangesNothing() throws {
        for state in [PaymentStatus.captured, .partiallyCaptured, .debt] {
            let once = try PaymentMachine.apply(.confirmed(at: Self.at), to: Self.payment(state)).get()
            let again = PaymentMachine.apply(.confirmed(at: Self.at.addingTimeInterval(60)), to: once)
            guard case .failure(let refusal) = again else { Issue.record("\(state): confirmed twice"); continue }
            #expect(refusal.reason == "The payment was confirmed already.")
            #expect(once.paidAt == Self.at)
        }
    }

    @Test func aWholeRideAboveTheHoldThatEndsInDebtAndIsSettled() throws {
        // authorizing → held → captured (the whole hold) → debt (the extra 300 failed) → captured (settled), confirmed.
        var p = TripPayment(gateway: "sandbox", methodId: "pm", card: nil, currency: "EUR", heldMinor: 1000)
        for event: PaymentEvent in [
            .authorized(intentId: "pi_9", amountMinor: 1000), .captured(amountMinor: 1000),
            .chargeFailed(amountMinor: 300, Self.decline), .settled(amountMinor: 300), .confirmed(at: Self.at),
        ] {
            p = try PaymentMachine.apply(event, to: p).get()
        }
        #expect(p.state == .captured)
        #expect(p.version == 6)
        #expect(p.capturedMinor == 1300)
        #expect(p.owedMinor == 0)
        #expect(p.paidAt == Self.at)
    }

    /// Settled: nothing more will happen to the hold.
    static let settled: [PaymentStatus: Bool] = [
        .authorizing: false, .actionRequired: false, .held: false,
        .captured: true, .partiallyCaptured: true, .released: true, .failed: true, .debt: true,
    ]

    @Test(arguments: PaymentStatus.allCases)
    func isSettledFollowsTheTable(_ state: PaymentStatus) {
        #expect(Self.settled[state] != nil, "no isSettled row for \(state)")
        #expect(PaymentMachine.isSettled(state) == Self.settled[state])
    }
}
