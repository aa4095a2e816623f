import Foundation
import Testing
import HTTPTransport
import EnRouteModels
import ProviderKit
import TestSupport

@MainActor
@Suite struct OfferViewModelTests {
    func makeSUT(
        _ answers: [ScriptedHTTPClient.Answer] = [], secondsToAnswer: Double = 15
    ) -> (OfferViewModel, ScriptedHTTPClient, ManualClock) {
        let clock = ManualClock()
        let http = ScriptedHTTPClient(answers: answers)
        let offer = Fixtures.offer(expiresAt: clock.date.addingTimeInterval(secondsToAnswer))
        let viewModel = OfferViewModel(
            offer: offer, api: RemoteProviderAPI(client: http, server: Fixtures.server), clock: clock,
            dates: clock.dates)
        return (viewModel, http, clock)
    }

    @Test func countsDownEachSecondAndExpiresAtZero() async throws {
        let (viewModel, _, clock) = makeSUT(secondsToAnswer: 3)
        #expect(viewModel.state.secondsLeft == 3)
        let countdown = Task { await viewModel.runCountdown() }
        for expected in [2, 1] {
            await clock.sleepers(atLeast: 1)
            await clock.advance(by: .seconds(1))
            try await eventually { viewModel.state.secondsLeft == expected }
        }
        #expect(viewModel.state.phase == .open)
        await clock.sleepers(atLeast: 1)
        await clock.advance(by: .seconds(1))
        await countdown.value
        #expect(viewModel.state.secondsLeft == 0)
        #expect(viewModel.state.phase == .expired)
        #expect(viewModel.state.canAnswer == false)
    }

    /// An expiry 2.4 s away shows 3, then 2 after 0.4 s.
    @Test func theDisplayedSecondChangesWhenTheRemainingTimeCrossesAWholeSecond() async throws {
        let (viewModel, _, clock) = makeSUT(secondsToAnswer: 2.4)
        #expect(viewModel.state.secondsLeft == 3)
        let countdown = Task { await viewModel.runCountdown() }
        await clock.sleepers(atLeast: 1)
        await clock.advance(by: .milliseconds(400))
        try await eventually { viewModel.state.secondsLeft == 2 }
        countdown.cancel()
        await countdown.value
    }

    @Test func acceptingAssignsTheTrip() async throws {
        let trip = Fixtures.trip()
        let (viewModel, http, _) = makeSUT([try .json(trip)])
        await viewModel.accept()
        #expect(viewModel.state.phase == .accepted(trip))
        #expect(http.requests.map(\.url.path) == ["/v1/provider/offers/O1/accept"])
        #expect(http.requests.first?.method == "POST")
        #expect(http.requests.first?.timeout == .seconds(5))
    }

    /// Accepting is a race against the time limit: offline, it fails now, says so, and is never retried later.
    @Test func acceptingOfflineSaysSoAndIsNeverQueued() async throws {
        let (viewModel, http, clock) = makeSUT([.failure(.network("no route to host"))])
        await viewModel.accept()
        #expect(viewModel.state.message == "You're offline — the offer can't be accepted.")
        #expect(viewModel.state.phase == .open)
        await clock.advance(by: .seconds(60))
        #expect(http.requests.count == 1)
    }

    @Test func anAcceptTheServerRefusesWithConflictSaysTheOfferIsGone() async throws {
        let taken = Fixtures.trip(status: "driverAssigned")
        let conflict = ConflictProblem(detail: "Another provider took the trip.", trip: taken)
        let (viewModel, _, _) = makeSUT([try .json(conflict, status: 409)])
        await viewModel.accept()
        #expect(viewModel.state.phase == .gone)
        #expect(viewModel.state.message == "This offer is no longer available. Another provider took the trip.")
    }

    @Test func anExpiredOfferIsNotSent() async throws {
        let (viewModel, http, clock) = makeSUT(secondsToAnswer: 2)
        await clock.advance(by: .seconds(2))
        await viewModel.accept()
        #expect(viewModel.state.phase == .expired)
        #expect(http.requests.isEmpty)
    }

    @Test func decliningTellsTheServer() async throws {
        let (viewModel, http, _) = makeSUT([.response(HTTPClientResponse(status: 204))])
        await viewModel.decline()
        #expect(viewModel.state.phase == .declined)
        #expect(http.requests.map(\.url.path) == ["/v1/provider/offers/O1/decline"])
    }

    @Test func aWithdrawnOfferCannotBeAccepted() async throws {
        let (viewModel, http, _) = makeSUT()
        viewModel.withdraw()
        await viewModel.accept()
        #expect(viewModel.state.phase == .gone)
        #expect(http.requests.isEmpty)
    }
}
