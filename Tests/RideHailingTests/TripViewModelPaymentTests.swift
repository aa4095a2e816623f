import Foundation
import Synchronization
import Testing
import ClientKit
import EnRouteModels
import TestSupport
@testable import RideHailing

/// The 402 answers to a confirmation as the rider reads them, and how each is answered: another card, the bank's
/// challenge (same quote, new key), settling a debt, adding a card. None is retried by itself.
@MainActor
@Suite struct TripViewModelPaymentTests {
    struct SUT {
        let viewModel: TripViewModel
        let api: FakeTripAPI
        let payments: FakeRidePaymentsAPI
        let clock: ManualClock
        let log: CallLog
        let requests: Recorded<TripRequest>
    }

    nonisolated static let challengeURL = URL(string: "https://api.enroute.test/v1/payments/sandbox/challenges/pi_1")!

    /// A screen showing one economy quote `q1` (without an expiry, so no countdown runs), whose confirmations
    /// `answer` decides by call number.
    private func makeSUT(_ answer: @escaping @Sendable (Int) throws -> Trip) async -> SUT {
        let log = CallLog()
        let api = FakeTripAPI(log: log)
        let payments = FakeRidePaymentsAPI(log: log)
        let clock = ManualClock()
        let keys = Mutex(0)
        let requests = Recorded<TripRequest>()
        api.expect {
            $0.estimate = { _, _ in
                [Estimate(productID: "economy", fare: Fixtures.eur(1250), etaSeconds: 180, quoteId: "q1")]
            }
            $0.requestTrip = { call, request, _ in
                requests.append(request)
                return try answer(call)
            }
        }
        let viewModel = TripViewModel(
            api: api, channel: FakeLiveTripChannel(log: log, acceptsConnections: false), clock: clock,
            logger: RecordingRideLogger(),
            makeKey: {
                Fixtures.key(
                    keys.withLock {
                        $0 += 1; return $0
                    })
            },
            payments: payments, dates: clock.dates)
        await viewModel.loadEstimates(pickup: Fixtures.pickup, dropoff: Fixtures.dropoff)
        return SUT(viewModel: viewModel, api: api, payments: payments, clock: clock, log: log, requests: requests)
    }

    /// Confirms `productID` and waits for the answer; a confirmation left pausing for a retry fails the test instead of
    /// hanging it (a refusal must end the request at once).
    private func confirm(_ sut: SUT, _ productID: String = "economy") async throws {
        let before = sut.api.requestKeys.count
        let tap = Task { await sut.viewModel.confirm(productID: productID) }
        defer { tap.cancel() }
        try await eventually("the confirmation answered", within: .seconds(90)) {
            sut.api.requestKeys.count > before && !sut.viewModel.state.isRequesting
        }
        await tap.value
    }

    nonisolated static let refusals: [(PaymentProblem, RideRequestPrompt, String)] = [
        (
            Fixtures.problem(
                PaymentProblemType.declined, declineCode: "insufficient_funds",
                nextStep: "Try another card or add funds."),
            .cardDeclined(declineCode: "insufficient_funds", nextStep: "Try another card or add funds."),
            "Your card was declined. Try another card or add funds."
        ),
        (
            Fixtures.problem(PaymentProblemType.declined, declineCode: "generic_decline"),
            .cardDeclined(declineCode: "generic_decline", nextStep: "Try another card."),
            "Your card was declined. Try another card."
        ),
        (
            Fixtures.problem(PaymentProblemType.actionRequired, actionURL: challengeURL),
            .challenge(challengeURL),
            "Your bank needs you to confirm this payment. Open the link, then come back to request the ride."
        ),
        (
            Fixtures.problem(PaymentProblemType.outstandingBalance, amount: Fixtures.eur(840)),
            .outstandingBalance(Fixtures.eur(840)),
            "You owe EUR 8.40 from an earlier trip. Pay it to request a ride."
        ),
        (
            Fixtures.problem(PaymentProblemType.methodRequired),
            .addCard,
            "Add a card to request a ride."
        ),
    ]

    @Test(arguments: refusals)
    func eachPaymentRefusalIsShownInTheRidersWordsAndNotRetried(
        problem: PaymentProblem, prompt: RideRequestPrompt, message: String
    ) async throws {
        let sut = await makeSUT { _ in throw RideRequestRefusal.payment(problem) }
        sut.payments.expect { $0.paymentMethods = { [Fixtures.visa, Fixtures.mastercard] } }
        try await confirm(sut)

        #expect(sut.viewModel.state.prompt == prompt)
        #expect(sut.viewModel.state.prompt?.message == message)
        #expect(sut.api.requestKeys == [Fixtures.key(1)])
        #expect(sut.clock.sleeperCount == 0)
        #expect(sut.viewModel.state.trip == nil)
        #expect(!sut.viewModel.state.isRequesting)
        #expect(RideScreen.render(sut.viewModel.state, marker: nil).contains("! \(message)"))
    }

    @Test func aDeclineOffersTheSavedCardsAndPayingWithAnotherRepeatsTheSameQuoteUnderANewKey() async throws {
        let sut = await makeSUT { call in
            if call == 1 {
                throw RideRequestRefusal.payment(
                    Fixtures.problem(PaymentProblemType.declined, declineCode: "generic_decline"))
            }
            return Fixtures.trip(.noDriversFound, version: 2)
        }
        sut.payments.expect {
            $0.paymentMethods = { [Fixtures.visa, Fixtures.mastercard] }
            $0.makeDefault = { id in #expect(id == "pm-2") }
        }
        try await confirm(sut)
        #expect(sut.viewModel.state.paymentMethods == [Fixtures.visa, Fixtures.mastercard])

        await sut.viewModel.payWith(cardID: "pm-2")
        #expect(
            sut.log.all.filter { !$0.hasPrefix("estimate") } == [
                "requestTrip", "paymentMethods", "makeDefault(pm-2)", "paymentMethods", "requestTrip",
            ])
        #expect(sut.requests.all.map(\.quoteId) == ["q1", "q1"])
        #expect(sut.api.requestKeys == [Fixtures.key(1), Fixtures.key(2)])
        #expect(sut.viewModel.state.prompt == nil)
        #expect(sut.viewModel.state.trip?.state == .noDriversFound)
    }

    @Test func answeringTheChallengeRepeatsTheRequestWithTheSameQuoteAndANewKey() async throws {
        let sut = await makeSUT { call in
            if call == 1 {
                throw RideRequestRefusal.payment(
                    Fixtures.problem(PaymentProblemType.actionRequired, actionURL: Self.challengeURL))
            }
            return Fixtures.trip(.noDriversFound, version: 2)
        }
        try await confirm(sut)
        #expect(sut.viewModel.state.prompt == .challenge(Self.challengeURL))
        #expect(RideScreen.render(sut.viewModel.state, marker: nil).last == "  \(Self.challengeURL.absoluteString)")

        await sut.viewModel.challengeAnswered()
        #expect(
            sut.requests.all == [
                TripRequest(pickup: Fixtures.pickup, dropoff: Fixtures.dropoff, productID: "economy", quoteId: "q1"),
                TripRequest(pickup: Fixtures.pickup, dropoff: Fixtures.dropoff, productID: "economy", quoteId: "q1"),
            ])
        #expect(sut.api.requestKeys == [Fixtures.key(1), Fixtures.key(2)])
        #expect(sut.viewModel.state.prompt == nil)
        #expect(sut.viewModel.state.trip?.id == "T-1")

        await sut.viewModel.challengeAnswered()  // nothing left to answer
        #expect(sut.api.requestKeys.count == 2)
    }

    @Test func settlingTheBalanceUsesItsOwnKeyAndClearsThePrompt() async throws {
        let sut = await makeSUT { _ in
            throw RideRequestRefusal.payment(
                Fixtures.problem(PaymentProblemType.outstandingBalance, amount: Fixtures.eur(840)))
        }
        sut.payments.expect {
            $0.settle = { key in
                #expect(key == Fixtures.key(2))
                return AccountBalance(outstanding: Fixtures.eur(0), tripIds: [])
            }
        }
        try await confirm(sut)
        await sut.viewModel.settle()

        #expect(sut.payments.log.count("settle") == 1)
        #expect(sut.viewModel.state.prompt == nil)
        #expect(sut.viewModel.state.errorMessage == nil)
        #expect(sut.viewModel.state.canRequest)
        #expect(sut.api.requestKeys.count == 1)  // the rider confirms the ride again herself
    }

    @Test func aSettlementTheCardDeclinesKeepsTheDebtOnScreen() async throws {
        let sut = await makeSUT { _ in
            throw RideRequestRefusal.payment(
                Fixtures.problem(PaymentProblemType.outstandingBalance, amount: Fixtures.eur(840)))
        }
        sut.payments.expect {
            $0.settle = { _ in
                throw RideRequestRefusal.payment(
                    Fixtures.problem(PaymentProblemType.declined, declineCode: "insufficient_funds"))
            }
        }
        try await confirm(sut)
        await sut.viewModel.settle()

        #expect(sut.viewModel.state.prompt == .outstandingBalance(Fixtures.eur(840)))
        #expect(sut.viewModel.state.errorMessage == "Your card was declined. Try another card.")
        #expect(!sut.viewModel.state.isPaying)
    }

    @Test func addingACardAnswersMethodRequired() async throws {
        let sut = await makeSUT { _ in
            throw RideRequestRefusal.payment(Fixtures.problem(PaymentProblemType.methodRequired))
        }
        sut.payments.expect {
            $0.addPaymentMethod = { token, makeDefault in
                #expect(token == "pm_card_visa")
                #expect(makeDefault)
                return Fixtures.visa
            }
            $0.paymentMethods = { [Fixtures.visa] }
        }
        try await confirm(sut)
        #expect(sut.viewModel.state.prompt == .addCard)
        await sut.viewModel.addCard(token: "pm_card_visa")

        #expect(sut.viewModel.state.prompt == nil)
        #expect(sut.viewModel.state.paymentMethods == [Fixtures.visa])
    }
}
