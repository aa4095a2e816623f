import Foundation
import Testing
import HTTPTransport
import NotificationsKit
import TestSupport

@Suite struct RemoteNotificationInboxRepositoryTests {
    static func makeSUT(
        _ script: [Result<Int, HTTPClientError>] = [], clock: ManualClock = ManualClock()
    )
        -> (RemoteNotificationInboxRepository, ScriptedHTTPClient, ManualClock)
    {
        let http = ScriptedHTTPClient(script)
        return (RemoteNotificationInboxRepository(http: http, server: testServer, clock: clock), http, clock)
    }

    @Test func aTapWaitsUntilSomeoneSubscribesThenReplays() async {
        let (inbox, _, _) = Self.makeSUT()
        await inbox.receive(tap("91"))
        var taps = inbox.taps().makeAsyncIterator()
        #expect(await taps.next() == tap("91"))
    }

    @Test func repeatsAreDroppedByNotificationID() async {
        let (inbox, _, _) = Self.makeSUT()
        await inbox.receive(tap("91"))
        await inbox.receive(tap("91", action: .trackOrder))
        await inbox.receive(tap("92"))
        var taps = inbox.taps().makeAsyncIterator()
        #expect(await taps.next()?.id == "91")
        #expect(await taps.next()?.id == "92")
    }

    @Test func tapsForAnAccountThatSignedOutHereAreDropped() async {
        let (inbox, _, _) = Self.makeSUT()
        await inbox.receive(tap("90", account: "a1"))
        await inbox.accountSignedOut("a1")
        await inbox.receive(tap("91", account: "a1"))
        await inbox.receive(tap("92", account: "b2"))
        var taps = inbox.taps().makeAsyncIterator()
        #expect(await taps.next()?.id == "92")
    }

    @Test func eachOpenIsReportedOnce() async throws {
        let (inbox, http, _) = Self.makeSUT([.success(204)])
        await inbox.markOpened(tap("91", action: .trackOrder))
        await inbox.markOpened(tap("91", action: .trackOrder))
        let request = try #require(http.requests.first)
        #expect(http.requests.count == 1)
        #expect(request.method == "POST" && request.url.path == "/v1/notifications/91/opened")
        #expect(request.headers["Authorization"] == "Bearer token-a1")
        #expect(
            try JSONSerialization.jsonObject(with: request.body ?? Data()) as? [String: String] == [
                "action": "trackOrder"
            ])
    }

    @Test func aFailedReportIsRetriedOnTheClockThenDropped() async {
        let (inbox, http, clock) = Self.makeSUT([
            .success(503), .failure(.network("down")), .success(500), .success(502),
        ])
        let report = Task { await inbox.markOpened(tap("91")) }
        for delay in [1, 3, 10] {
            await clock.sleepers(atLeast: 1)
            await clock.advance(by: .seconds(delay))
        }
        await report.value
        #expect(http.requests.count == 4)
    }

    @Test func aReportStopsAtTheFirstAnswerThatWillNeverChange() async {
        let (inbox, http, _) = Self.makeSUT([.success(404)])
        await inbox.markOpened(tap("91"))
        #expect(http.requests.count == 1)
    }
}
