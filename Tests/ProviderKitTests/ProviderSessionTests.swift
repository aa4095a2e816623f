import Foundation
import Testing
import HTTPTransport
import EnRouteModels
import ProviderKit
import TestSupport

@Suite struct ProviderSessionTests {
    static let offer = Fixtures.offer(expiresAt: Date(timeIntervalSince1970: 1_792_520_015))

    static func event(_ name: String, _ value: some Encodable, id: String) throws -> ServerSentEvent {
        ServerSentEvent(
            event: name, data: String(decoding: try WireCoding.encoder().encode(value), as: UTF8.self), id: id)
    }

    @Test func goingOnlineSendsThePosition() async throws {
        let http = ScriptedHTTPClient(answers: [
            try .json(AvailabilityState(online: true)), try .json(AvailabilityState(online: false)),
        ])
        let session = ProviderSession(
            api: RemoteProviderAPI(client: http, server: Fixtures.server), clock: ManualClock())
        try await session.goOnline(at: Fixtures.pickup)
        #expect(await session.isOnline)
        try await session.goOffline()
        #expect(await session.isOnline == false)
        let bodies = try http.requests.map {
            try WireCoding.decoder().decode(AvailabilityRequest.self, from: #require($0.body))
        }
        #expect(
            bodies == [
                AvailabilityRequest(online: true, position: Fixtures.pickup), AvailabilityRequest(online: false),
            ])
        #expect(
            http.requests.allSatisfy {
                $0.url.path == "/v1/provider/availability" && $0.headers["Authorization"] == "Bearer token"
            })
    }

    /// Resync (active trips), stream, drop, pause 1 s, resync, stream again with `Last-Event-ID`.
    @Test func theFeedDeliversEventsAndReconnectsAfterAPauseWithTheLastEventId() async throws {
        let trip = Fixtures.trip()
        let clock = ManualClock()
        let http = ScriptedHTTPClient(
            answers: [try .json(TripSnapshotList(trips: [])), try .json(TripSnapshotList(trips: [trip]))],
            feeds: [
                .init(
                    events: [
                        try Self.event("offer", Self.offer, id: "7"),
                        ServerSentEvent(event: "keepalive", data: "{}", id: "8"),
                        try Self.event("offerWithdrawn", OfferWithdrawn(offerId: "O1", tripId: "T1"), id: "9"),
                    ],
                    failure: .network("connection reset")),
                .init(events: [try Self.event("tripUpdated", trip, id: "10")], staysOpen: true),
            ])
        let session = ProviderSession(api: RemoteProviderAPI(client: http, server: Fixtures.server), clock: clock)
        var updates = session.updates().makeAsyncIterator()

        #expect(await updates.next() == .event(.offer(Self.offer)))
        #expect(await updates.next() == .event(.offerWithdrawn(OfferWithdrawn(offerId: "O1", tripId: "T1"))))
        guard case .disconnected(_, let pause) = await updates.next() else { Issue.record("expected a drop"); return }
        #expect(pause == .seconds(1))
        await clock.sleepers(atLeast: 1)
        await clock.advance(by: .seconds(1))
        #expect(await updates.next() == .event(.tripUpdated(trip)))  // the resync
        #expect(await updates.next() == .event(.tripUpdated(trip)))  // the stream
        let streams = http.requests.filter { $0.url.path == "/v1/provider/events" }
        #expect(streams.map { $0.headers["Last-Event-ID"] } == [nil, "9"])
    }

    @Test func pausesGrowWhileTheFeedKeepsFailing() async throws {
        let clock = ManualClock()
        let http = ScriptedHTTPClient(answers: [
            .failure(.network("down")), .failure(.network("down")), .failure(.network("down")),
        ])
        let session = ProviderSession(api: RemoteProviderAPI(client: http, server: Fixtures.server), clock: clock)
        var updates = session.updates().makeAsyncIterator()
        var pauses: [Duration] = []
        for _ in 0..<3 {
            guard case .disconnected(_, let pause) = await updates.next() else {
                Issue.record("expected a drop"); return
            }
            pauses.append(pause)
            if pauses.count < 3 {
                await clock.sleepers(atLeast: 1)
                await clock.advance(by: pause)
            }
        }
        #expect(pauses == [.seconds(1), .seconds(2), .seconds(4)])
    }
}
