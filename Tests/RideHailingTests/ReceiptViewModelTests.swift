import Foundation
import Synchronization
import Testing
import HTTPTransport
import EnRouteModels
import TestSupport
@testable import RideHailing

/// After the trip: the receipt once the payment settles, asked for again politely; one tip; one rating.
@MainActor
@Suite struct ReceiptViewModelTests {
    private func makeSUT() -> (ReceiptViewModel, FakeTripReceiptAPI, ManualClock) {
        let api = FakeTripReceiptAPI()
        let clock = ManualClock()
        let keys = Mutex(0)
        let model = ReceiptViewModel(
            tripID: "T-1", api: api, clock: clock,
            makeKey: {
                Fixtures.key(
                    keys.withLock {
                        $0 += 1; return $0
                    })
            })
        return (model, api, clock)
    }

    nonisolated static let notYet = APIError.problem(
        Problem(title: "Not Found", status: 404, detail: "The payment has not settled yet."))

    @Test func theReceiptIsAskedForAgainTwoThenFourSecondsApartUntilThePaymentSettles() async throws {
        let (model, api, clock) = makeSUT()
        api.expect {
            $0.receipt = { call in
                if call <= 2 { throw Self.notYet }
                return Fixtures.receipt()
            }
        }
        let load = Task { await model.load() }
        try await eventually("first ask", within: .seconds(90)) { api.log.count("receipt") == 1 }
        #expect(model.state.isWaitingForPayment)

        await clock.sleepers(atLeast: 1)
        await clock.advance(by: .milliseconds(1999))
        #expect(api.log.count("receipt") == 1)
        await clock.advance(by: .milliseconds(1))
        try await eventually("second ask", within: .seconds(90)) { api.log.count("receipt") == 2 }

        await clock.sleepers(atLeast: 1)
        await clock.advance(by: .milliseconds(3999))
        #expect(api.log.count("receipt") == 2)
        await clock.advance(by: .milliseconds(1))
        await load.value

        #expect(model.state.receipt == Fixtures.receipt())
        #expect(!model.state.isWaitingForPayment)
        #expect(model.state.errorMessage == nil)
        #expect(clock.sleeperCount == 0)
    }

    @Test func theReceiptLoadGivesUpForNowAfterItsAttempts() async throws {
        let (model, api, clock) = makeSUT()
        api.expect { $0.receipt = { _ in throw Self.notYet } }
        let load = Task { await model.load() }
        try await eventually("every attempt", advancing: clock, by: .seconds(30), sleepers: 1) {
            api.log.count("receipt") == ReceiptViewModel.loadAttempts
        }
        await load.value
        #expect(model.state.receipt == nil)
        #expect(
            model.state.errorMessage == "Your receipt isn't ready yet. It will appear once the payment goes through.")
    }

    @Test func aReceiptTheServerRefusesIsNotAskedForAgain() async {
        let (model, api, clock) = makeSUT()
        api.expect { $0.receipt = { _ in throw APIError.problem(Problem(title: "Forbidden", status: 403)) } }
        await model.load()
        #expect(api.log.count("receipt") == 1)
        #expect(model.state.errorMessage == "This receipt isn't available.")
        #expect(clock.sleeperCount == 0)
    }

    @Test func aTripIsTippedOnceAndTheReceiptShowsTheTip() async {
        let (model, api, _) = makeSUT()
        api.expect {
            $0.tip = { _, amount, _ in #expect(amount == 300) }
            $0.receipt = { _ in Fixtures.receipt(tip: 300) }
        }
        await model.tip(amountMinor: 300)
        await model.tip(amountMinor: 500)

        #expect(api.tipKeys == [Fixtures.key(1)])
        #expect(model.state.tip == .sent(amountMinor: 300))
        #expect(!model.state.canTip)
        #expect(model.state.receipt?.lines.last == PriceLine(kind: "tip", label: "Tip", amount: Fixtures.eur(300)))
    }

    @Test func aTipWhoseAnswerWasLostIsSentAgainUnderTheSameKey() async {
        let (model, api, _) = makeSUT()
        api.expect {
            $0.tip = { call, _, _ in if call == 1 { throw HTTPClientError.network("connection reset") } }
            $0.receipt = { _ in Fixtures.receipt(tip: 300) }
        }
        await model.tip(amountMinor: 300)
        #expect(model.state.tip == .notSent)
        #expect(model.state.errorMessage == "Couldn't send the tip. Try again.")
        await model.tip(amountMinor: 300)

        #expect(api.tipKeys == [Fixtures.key(1), Fixtures.key(1)])
        #expect(model.state.tip == .sent(amountMinor: 300))
    }

    @Test func aTipTheServerAlreadyHasCountsAsSent() async {
        let (model, api, _) = makeSUT()
        api.expect {
            $0.tip = { _, _, _ in
                throw APIError.problem(Problem(title: "Conflict", status: 409, detail: "Already tipped."))
            }
        }
        await model.tip(amountMinor: 300)
        #expect(model.state.tip == .sent(amountMinor: nil))
        #expect(model.state.errorMessage == "You already tipped for this trip.")
    }

    @Test func aTripIsRatedOnce() async {
        let (model, api, _) = makeSUT()
        api.expect {
            $0.rate = { stars, comment in
                #expect(stars == 5)
                #expect(comment == "Smooth")
            }
        }
        await model.rate(stars: 5, comment: "Smooth")
        await model.rate(stars: 1)
        await model.rate(stars: 0)  // out of range: never sent

        #expect(api.log.all == ["rate(T-1, 5)"])
        #expect(model.state.rating == .sent(stars: 5))
    }
}
