import Foundation
import Testing
import HTTPTransport
import EnRouteModels
import TestSupport
@testable import RideHailing

@Suite struct SSELiveTripChannelTests {
    private func makeSUT(_ feeds: ScriptedHTTPClient.Feed...) -> (SSELiveTripChannel, ScriptedHTTPClient) {
        let client = ScriptedHTTPClient(feeds: feeds)
        let server = APIServer(
            baseURL: URL(string: "https://api.enroute.test")!, credentials: StaticAccessToken("rider-token"))
        return (SSELiveTripChannel(client: client, server: server), client)
    }

    private func message(_ event: TripEvent, id: String) throws -> ServerSentEvent {
        ServerSentEvent(event: event.name, data: String(decoding: try event.payload(), as: UTF8.self), id: id)
    }

    private func collect(_ stream: AsyncThrowingStream<TripEvent, any Error>) async throws -> [TripEvent] {
        var events: [TripEvent] = []
        for try await event in stream { events.append(event) }
        return events
    }

    @Test func decodesTripUpdatesAndDriverMovesAndSkipsUnknownNames() async throws {
        let trip = TripEvent.tripUpdated(Fixtures.trip(.driverAssigned, version: 3, eta: 240))
        let moved = TripEvent.driverMoved(Fixtures.location(seq: 11, heading: 90))
        let (channel, _) = makeSUT(
            .init(events: [
                try message(trip, id: "1"),
                ServerSentEvent(event: "surgePricing", data: "{\"x\":1}", id: "2"),
                try message(moved, id: "3"),
            ]))

        #expect(try await collect(channel.events(tripID: "T-1")) == [trip, moved])
    }

    @Test func opensTheTripsEventStreamWithTheRidersToken() async throws {
        let (channel, client) = makeSUT(.init(events: []))
        _ = try await collect(channel.events(tripID: "T-1"))
        let request = try #require(client.requests.first)
        #expect("\(request.method) \(request.url.path)" == "GET /v1/trips/T-1/events")
        #expect(request.headers["Accept"] == "text/event-stream")
        #expect(request.headers["Authorization"] == "Bearer rider-token")
    }

    @Test func aBrokenConnectionThrowsAfterTheEventsBeforeIt() async throws {
        let trip = TripEvent.tripUpdated(Fixtures.trip())
        let (channel, _) = makeSUT(.init(events: [try message(trip, id: "1")], failure: FakeError(reason: "reset")))
        var received: [TripEvent] = []
        await #expect(throws: FakeError(reason: "reset")) {
            for try await event in channel.events(tripID: "T-1") { received.append(event) }
        }
        #expect(received == [trip])
    }

    @Test func aKnownEventThatDoesNotDecodeThrows() async throws {
        let (channel, _) = makeSUT(
            .init(events: [ServerSentEvent(event: "driverMoved", data: "{\"seq\":\"x\"}", id: "9")]))
        await #expect {
            _ = try await collect(channel.events(tripID: "T-1"))
        } throws: { error in
            guard case APIError.undecodable(let text)? = error as? APIError else { return false }
            return text.hasPrefix("driverMoved event 9")
        }
    }

    @Test func stoppingTheIterationClosesTheConnection() async throws {
        let (channel, client) = makeSUT(
            .init(events: [try message(.tripUpdated(Fixtures.trip()), id: "1")], staysOpen: true))
        #expect(!client.isFeedClosed)
        for try await _ in channel.events(tripID: "T-1") { break }
        // The upstream stream is closed from the channel's task; give it a moment without sleeping.
        try await eventually("the upstream feed is closed") { client.isFeedClosed }
    }
}
