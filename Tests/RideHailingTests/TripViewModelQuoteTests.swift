import Foundation
import Synchronization
import Testing
import HTTPTransport
import EnRouteModels
import TestSupport
@testable import RideHailing

/// Quotes on the request screen: the price has an identity and a time limit, counts down on the injected clock,
/// re-quotes itself when it runs out, and a new price is shown and confirmed by the rider, never silently.
@MainActor
@Suite struct TripViewModelQuoteTests {
    struct SUT {
        let viewModel: TripViewModel
        let api: FakeTripAPI
        let clock: ManualClock
        let log: CallLog
        let requests: Recorded<TripRequest>
    }

    private func makeSUT() -> SUT {
        let log = CallLog()
        let api = FakeTripAPI(log: log)
        let clock = ManualClock()
        let keys = Mutex(0)
        let viewModel = TripViewModel(
            api: api, channel: FakeLiveTripChannel(log: log, acceptsConnections: false), clock: clock,
            logger: RecordingRideLogger(),
            makeKey: {
                Fixtures.key(
                    keys.withLock {
                        $0 += 1; return $0
                    })
            },
            dates: clock.dates)
        return SUT(viewModel: viewModel, api: api, clock: clock, log: log, requests: Recorded())
    }

    /// Estimates answer `quotes[n]` on the nth call (the last one from then on).
    private func quoting(_ sut: SUT, _ quotes: [[Estimate]]) {
        sut.api.expect {
            $0.estimate = { [log = sut.log] _, _ in quotes[min(log.count("estimate"), quotes.count) - 1] }
        }
    }

    private func load(_ sut: SUT) async {
        await sut.viewModel.loadEstimates(pickup: Fixtures.pickup, dropoff: Fixtures.dropoff)
    }

    /// Lets `seconds` pass a second at a time, each once the countdown sleeps again: a jump of many seconds at once can
    /// land while the woken countdown is between reading the time and going back to sleep (its next tick then lies past
    /// the jump, showing a time left from before it), which a loaded machine made happen.
    private func pass(_ seconds: Int, _ sut: SUT) async {
        for _ in 0..<seconds {
            await sut.clock.sleepers(atLeast: 1)
            await sut.clock.advance(by: .seconds(1))
        }
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

    @Test func theQuoteCountsDownOnTheInjectedClock() async throws {
        let sut = makeSUT()
        quoting(sut, [[Fixtures.quote("q1", fare: 1250, expiresIn: 300)]])
        await load(sut)
        try await eventually("counting", within: .seconds(90)) { sut.viewModel.state.quoteSecondsLeft == 300 }

        await sut.clock.sleepers(atLeast: 1)
        await sut.clock.advance(by: .seconds(1))
        try await eventually("a second less", within: .seconds(90)) { sut.viewModel.state.quoteSecondsLeft == 299 }
        #expect(
            RideScreen.render(sut.viewModel.state, marker: nil) == [
                "Choose a ride:", "  economy: EUR 12.50, pickup in 3 min", "Prices held for 4 min 59 s",
            ])
        sut.viewModel.stopLive()
    }

    @Test func anExpiredQuoteIsRequotedByItselfAndShownOldToNewWithoutConfirming() async throws {
        let sut = makeSUT()
        quoting(
            sut,
            [[Fixtures.quote("q1", fare: 1250, expiresIn: 300)], [Fixtures.quote("q2", fare: 1310, expiresIn: 600)]])
        await load(sut)

        await pass(299, sut)
        try await eventually("one second left", within: .seconds(90)) { sut.viewModel.state.quoteSecondsLeft == 1 }
        #expect(sut.log.count("estimate") == 1)

        await sut.clock.sleepers(atLeast: 1)
        await sut.clock.advance(by: .seconds(1))
        try await eventually("re-quoted", within: .seconds(90)) { sut.viewModel.state.estimates.first?.quoteId == "q2" }
        try await eventually("counting the new quote", within: .seconds(90)) {
            sut.viewModel.state.quoteSecondsLeft == 300
        }

        #expect(sut.log.count("estimate") == 2)
        #expect(
            sut.viewModel.state.refreshedQuotes == [
                QuoteRefresh(productID: "economy", before: Fixtures.eur(1250), after: Fixtures.eur(1310))
            ])
        #expect(
            RideScreen.render(sut.viewModel.state, marker: nil)[1]
                == "  economy: EUR 12.50 → EUR 13.10 (new price), pickup in 3 min")
        #expect(sut.api.requestKeys.isEmpty)
        #expect(sut.viewModel.state.prompt == nil)
        sut.viewModel.stopLive()
    }

    @Test func aRequoteThatFailsMarksThePricesExpiredAndTriesAgainFiveSecondsLater() async throws {
        let sut = makeSUT()
        sut.api.expect {
            $0.estimate = { [log = sut.log] _, _ in
                switch log.count("estimate") {
                case 1: return [Fixtures.quote("q1", fare: 1250, expiresIn: 60)]
                case 2: throw HTTPClientError.network("offline")
                default: return [Fixtures.quote("q3", fare: 1250, expiresIn: 365)]
                }
            }
        }
        await load(sut)
        await pass(60, sut)
        try await eventually("marked expired", within: .seconds(90)) { sut.viewModel.state.quotesExpired }
        #expect(RideScreen.render(sut.viewModel.state, marker: nil).last == "Prices expired; refreshing…")

        await sut.clock.sleepers(atLeast: 1)
        await sut.clock.advance(by: .milliseconds(4999))
        #expect(sut.log.count("estimate") == 2)
        await sut.clock.advance(by: .milliseconds(1))
        try await eventually("refreshed", within: .seconds(90)) {
            !sut.viewModel.state.quotesExpired && sut.viewModel.state.estimates.first?.quoteId == "q3"
        }
        // The same price under a new quote: shown as refreshed, not as a change.
        #expect(
            RideScreen.render(sut.viewModel.state, marker: nil)[1]
                == "  economy: EUR 12.50 (refreshed), pickup in 3 min")
        sut.viewModel.stopLive()
    }

    @Test func confirmingSendsTheQuoteIdAndEndsTheCountdown() async throws {
        let sut = makeSUT()
        quoting(sut, [[Fixtures.quote("q1", fare: 1250), Fixtures.quote("x1", fare: 2400, product: "xl")]])
        sut.api.expect {
            $0.requestTrip = { [requests = sut.requests] _, request, _ in
                requests.append(request)
                return Fixtures.trip(.noDriversFound, version: 2)
            }
        }
        await load(sut)
        try await confirm(sut, "xl")

        #expect(
            sut.requests.all == [
                TripRequest(pickup: Fixtures.pickup, dropoff: Fixtures.dropoff, productID: "xl", quoteId: "x1")
            ])
        #expect(sut.viewModel.state.quoteSecondsLeft == nil)
        try await eventually("countdown stopped", within: .seconds(90)) { sut.clock.sleeperCount == 0 }
    }

    @Test func aQuoteExpiredAnswerShowsTheFreshQuoteAndAsksToConfirmAgain() async throws {
        let sut = makeSUT()
        let fresh = Fixtures.quote("q2", fare: 1310, expiresIn: 600)
        quoting(sut, [[Fixtures.quote("q1", fare: 1250)]])
        sut.api.expect {
            $0.requestTrip = { [requests = sut.requests] call, request, _ in
                requests.append(request)
                if call == 1 { throw RideRequestRefusal.quoteExpired(fresh: fresh) }
                return Fixtures.trip(.noDriversFound, version: 2)
            }
        }
        await load(sut)
        try await confirm(sut)

        // Not retried, and not confirmed at the new price by itself.
        #expect(sut.api.requestKeys == [Fixtures.key(1)])
        #expect(!sut.viewModel.state.isRequesting)
        #expect(sut.viewModel.state.estimates == [fresh])
        let refresh = QuoteRefresh(productID: "economy", before: Fixtures.eur(1250), after: Fixtures.eur(1310))
        #expect(sut.viewModel.state.prompt == .confirmNewPrice(refresh))
        #expect(
            sut.viewModel.state.prompt?.message
                == "The price changed from EUR 12.50 to EUR 13.10. Confirm to ride at the new price.")
        try await eventually("counting the fresh quote", within: .seconds(90)) {
            sut.viewModel.state.quoteSecondsLeft == 600
        }

        try await confirm(sut)
        #expect(sut.requests.all.map(\.quoteId) == ["q1", "q2"])
        #expect(sut.api.requestKeys == [Fixtures.key(1), Fixtures.key(2)])
        #expect(sut.viewModel.state.prompt == nil)
    }

    @Test func aRejectedQuoteIsRequotedAndTheRiderAskedToConfirmTheNewOne() async throws {
        let sut = makeSUT()
        quoting(sut, [[Fixtures.quote("q1", fare: 1250)], [Fixtures.quote("q2", fare: 1290)]])
        sut.api.expect {
            $0.requestTrip = { _, _, _ in
                throw RideRequestRefusal.quoteRejected(detail: "is not a quote of this account")
            }
        }
        await load(sut)
        try await confirm(sut)

        #expect(sut.api.requestKeys.count == 1)
        #expect(sut.log.count("estimate") == 2)
        #expect(
            sut.viewModel.state.prompt
                == .confirmNewPrice(
                    QuoteRefresh(productID: "economy", before: Fixtures.eur(1250), after: Fixtures.eur(1290))))
        sut.viewModel.stopLive()
    }
}
