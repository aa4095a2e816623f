import Foundation
import Testing
import EnRouteModels
import EnRouteDomain
import EnRouteAPI
import TestSupport

/// A backend nobody holds any more is freed, with its live streams and searches: no retain cycle
/// keeps it (LeakSanitizer reported every such backend at the end of the suite).
@Suite struct ReleaseTests {
    @Test func aBackendWhoseTripStreamWasWatchedIsFreedOnceDropped() async throws {
        weak var service: TripService?
        weak var providers: ProviderOperations?
        do {
            let sut = try ProviderBackend(startDispatch: false)
            let trip = try await sut.requestRide()
            // A watcher joins the trip's live group and leaves after its first event.
            var events = await sut.stream("c1", .customer, "/v1/trips/\(trip.id)/events").makeAsyncIterator()
            let first = try await events.next()
            #expect(first?.event == "tripUpdated")
            service = sut.service
            providers = sut.providers
        }
        // The watcher's task ends by itself once its iterator is gone; then nothing holds the backend.
        try await eventually("the trip service is released after its owner dropped it") {
            service == nil && providers == nil
        }
    }

    @Test func droppingTheProviderSideStopsItsSearchesAndFreesTheDispatcher() async throws {
        weak var dispatcher: Dispatcher?
        weak var service: TripService?
        do {
            let sut = try ProviderBackend()
            await sut.online("p1", at: ProviderBackend.north(100))
            var inbox = ProviderInbox(sut.providers, "p1")
            _ = try await sut.requestRide()
            _ = try await inbox.offer()
            // The search waits on the offer's timer, which this test never lets run out.
            #expect(sut.providers.dispatcher.activeSearches == 1)
            dispatcher = sut.providers.dispatcher
            service = sut.service
        }
        try await eventually("no waiting search still holds the dispatcher") { dispatcher == nil && service == nil }
    }
}
