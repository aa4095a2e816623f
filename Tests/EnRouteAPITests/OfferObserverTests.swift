import Foundation
import Testing
import EnRouteModels
import EnRouteDomain
import EnRouteAPI
import HTTPEngine
import TestSupport

/// Dispatch tells an injected observer of each offer it makes (where the platform push hooks in).
@Suite(.timeLimit(.minutes(1))) struct OfferObserverTests {
    /// Records each offer the dispatcher reports, in order.
    final class RecordingObserver: OfferObserver {
        let made: AsyncStream<(offer: Offer, provider: String)>
        private let continuation: AsyncStream<(offer: Offer, provider: String)>.Continuation
        init() { (made, continuation) = AsyncStream.makeStream() }
        func offerMade(_ offer: Offer, to provider: String) async { continuation.yield((offer, provider)) }
    }

    @Test func everyOfferIsReportedOnceToTheObserverAsTheProviderStreamCarriedIt() async throws {
        let backend = TestBackend()
        let observer = RecordingObserver()
        let providers = ProviderOperations(
            service: backend.service, metrics: MetricsRegistry(), clock: backend.clock,
            ids: SequentialIDGenerator(prefix: "OF"), offers: observer, jitterSeed: 1)
        try providers.dispatcher.start()
        var reported = observer.made.makeAsyncIterator()
        var p1 = providers.events.subscribe("p1").makeAsyncIterator()
        _ = try await providers.setAvailability(
            AvailabilityRequest(online: true, position: ProviderBackend.north(100)), provider: "p1")
        _ = try await providers.setAvailability(
            AvailabilityRequest(online: true, position: ProviderBackend.north(200)), provider: "p2")
        _ = try await backend.requestRide()

        let first = try #require(await reported.next())
        #expect(first.provider == "p1")
        var streamed: ProviderEvent?
        while let event = await p1.next() { if event.name == "offer" { streamed = event; break } }
        #expect(try WireCoding.decoder().decode(Offer.self, from: Data(try #require(streamed).data)) == first.offer)

        // A decline moves dispatch to p2, and that offer is reported too.
        try await providers.dispatcher.decline(offerId: first.offer.offerId, by: "p1")
        let second = try #require(await reported.next())
        #expect(
            second.provider == "p2" && second.offer.tripId == first.offer.tripId
                && second.offer.offerId != first.offer.offerId)
        providers.dispatcher.stop()
    }
}
