import Foundation
import Synchronization
import HTTPTransport
import EnRouteWeb
import Testing
import EnRouteModels
import TestSupport

/// The share link through the real router on a manual clock: who may make one, what it shows, when it stops.
@Suite struct ShareLinkTests {
    func state(_ backend: TestBackend, _ token: String) async throws -> (status: Int, json: [String: Any]) {
        let answer = await backend.call("GET", APIPath.shareState(token), token: nil)
        return (answer.status, (try? JSONSerialization.jsonObject(with: Data(answer.body)) as? [String: Any]) ?? [:])
    }

    func pin(_ json: [String: Any]) -> String? { (json["pin"] as? [String: Any])?["state"] as? String }

    @Test func theLinkNeedsNoAccountAndShowsTheStepsAndALivePin() async throws {
        let ride = try await SharedRide.make(TestBackend())
        let (status, json) = try await state(ride.backend, ride.token)
        #expect(status == 200)
        #expect(
            (json["steps"] as? [[String: Any]])?.map { $0["title"] as? String } == [
                "Finding a driver", "Driver on the way", "Driver has arrived", "On the trip", "Arrived",
            ])
        #expect(pin(json) == "live")
        #expect(json["provider"] as? String != nil)
        #expect(json["customerId"] == nil && json["fare"] == nil, "nothing else of the account")
    }

    /// The order tracker's pin policy on the server's clock: live under 20 s, dimmed with its age under 2 min, then
    /// hidden, and the ETA says so.
    @Test func thePinDimsAfter20SecondsAndHidesAfter2MinutesOfSilence() async throws {
        let ride = try await SharedRide.make(TestBackend())
        await ride.backend.clock.advance(by: .seconds(19))
        #expect(pin(try await state(ride.backend, ride.token).json) == "live")
        await ride.backend.clock.advance(by: .seconds(2))
        let stale = try await state(ride.backend, ride.token).json
        #expect(pin(stale) == "stale")
        #expect((stale["pin"] as? [String: Any])?["label"] as? String == "Updated 21 s ago")
        await ride.backend.clock.advance(by: .seconds(99))
        let hidden = try await state(ride.backend, ride.token).json
        #expect(pin(hidden) == "hidden")
        #expect(hidden["eta"] as? String == "ETA updating")
    }

    /// The live stream re-words the page the moment the pin's fix turns 20 s old, not only on its tick (here an hour,
    /// so only that moment can explain the change).
    @Test func theStreamDimsThePinTheMomentItsFixTurnsTwentySecondsOld() async throws {
        var web = WebConfiguration()
        web.shareTick = .seconds(3600)
        let ride = try await SharedRide.make(TestBackend(web: web))
        let clock = ride.backend.clock, start = clock.date
        let seen = Mutex<[(at: TimeInterval, pin: String?, label: String?)]>([])
        let request = HTTPClientRequest(
            method: "GET", url: URL(string: "http://enroute.test" + APIPath.shareEvents(ride.token))!,
            headers: ["Accept": "text/event-stream"])
        let reader = Task {
            for try await event in InProcessHTTPClient(router: ride.backend.router).events(request)
            where event.event == "share" {
                let json = try JSONSerialization.jsonObject(with: Data(event.data.utf8)) as? [String: Any]
                let pin = json?["pin"] as? [String: Any]
                let at = clock.date.timeIntervalSince(start)
                seen.withLock { $0.append((at, pin?["state"] as? String, pin?["label"] as? String)) }
            }
        }
        defer { reader.cancel() }
        try await eventually { seen.withLock { $0.count } == 1 }
        #expect(seen.withLock { $0.first?.pin } == "live")
        for _ in 0..<19 { await clock.advance(by: .seconds(1)) }
        #expect(seen.withLock { $0.count } == 1, "nothing changes before 20 s")
        await clock.advance(by: .seconds(1))
        try await eventually(within: .seconds(5)) { seen.withLock { $0.count } == 2 }
        let dimmed = try #require(seen.withLock { $0.last })
        #expect(dimmed.pin == "stale")
        #expect(dimmed.label == "Updated 20 s ago")
    }

    @Test func onlyTheTripsCustomerMayShareIt() async throws {
        let ride = try await SharedRide.make(TestBackend())
        #expect(
            await ride.backend.call("POST", APIPath.tripShare(ride.tripId), token: ride.backend.token("c2", .customer))
                .status == 404)
        #expect(
            await ride.backend.call("POST", APIPath.tripShare(ride.tripId), token: ride.backend.token("p1", .provider))
                .status == 403)
        #expect(
            await ride.backend.call("POST", APIPath.orderShare(ride.tripId), token: ride.backend.token("c1", .customer))
                .status == 404, "a ride is not an order")
    }

    @Test func aForgedLinkIs404AndARevokedOne410() async throws {
        let ride = try await SharedRide.make(TestBackend())
        let parts = ride.token.split(separator: ".")
        let forged = "\(parts[0]).\(String(parts[1].reversed()))"
        #expect(try await state(ride.backend, forged).status == 404)
        let page = await ride.backend.call("GET", APIPath.share(forged), token: nil)
        #expect(page.status == 404 && String(decoding: page.body, as: UTF8.self).contains("This link is not valid"))
        #expect(
            await ride.backend.call(
                "DELETE", APIPath.tripShare(ride.tripId), token: ride.backend.token("c1", .customer)
            ).status == 204)
        #expect(try await state(ride.backend, ride.token).status == 410)
        let revoked = await ride.backend.call("GET", APIPath.share(ride.token), token: nil)
        #expect(
            revoked.status == 410 && String(decoding: revoked.body, as: UTF8.self).contains("This link was turned off"))
    }

    /// A link points where the server is configured to be reached (its path alone when nothing is), whatever `Host`
    /// the request names.
    @Test(arguments: [nil, "https://track.example.com", "https://track.example.com/"] as [String?])
    func aLinkIsBuiltFromConfigurationNeverFromTheHostHeader(publicURL: String?) async throws {
        var web = WebConfiguration()
        web.publicBaseURL = publicURL
        let ride = try await SharedRide.make(TestBackend(web: web))
        let customer = ride.backend.token("c1", .customer)
        let shared = await ride.backend.call(
            "POST", APIPath.tripShare(ride.tripId), token: customer,
            headers: ["Host": "evil.example"])
        let link = try JSONDecoder().decode(SharedRide.Link.self, from: Data(shared.body))
        #expect(!link.url.contains("evil.example"))
        let base = publicURL.map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 } ?? ""
        #expect(link.url == base + APIPath.share(link.token))
    }

    /// The console's cookie is `Secure` whenever the public URL is https (and only then: over plain http a browser
    /// would drop it).
    @Test(
        arguments: [(nil, false), ("http://127.0.0.1:8080", false), ("https://ops.example.com", true)]
            as [(String?, Bool)])
    func theConsoleCookieIsSecureWhenThePublicURLIsHTTPS(publicURL: String?, secure: Bool) async throws {
        var web = WebConfiguration()
        web.publicBaseURL = publicURL
        let backend = TestBackend(web: web)
        let session = await backend.call("POST", APIPath.Template.opsConsoleSession, token: backend.token("ops", .ops))
        #expect(session.status == 204)
        let cookie = try #require(session.headers["Set-Cookie"])
        #expect(cookie.contains("HttpOnly") && cookie.hasSuffix("; Secure") == secure, "\(cookie)")
    }

    /// A link has one spelling: its MAC re-spelled (the last character's unused low bit set, or padded) is 404.
    @Test func aLinkSpelledAnotherWayIs404() async throws {
        let ride = try await SharedRide.make(TestBackend())
        #expect(try await state(ride.backend, ride.token).status == 200)
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        let last = try #require(ride.token.last.flatMap { alphabet.firstIndex(of: $0) })
        for respelled in [String(ride.token.dropLast()) + String(alphabet[last ^ 1]), ride.token + "="] {
            #expect(try await state(ride.backend, respelled).status == 404, "\(respelled)")
        }
    }

    /// The link shows the end for 30 minutes, then the ended page with 410.
    @Test func theLinkEnds30MinutesAfterTheTripEnds() async throws {
        let ride = try await SharedRide.make(TestBackend())
        let cancelled = await ride.backend.call(
            "POST", APIPath.tripCancel(ride.tripId), token: ride.backend.token("c1", .customer), json: "{}")
        #expect(cancelled.status == 200)
        await ride.backend.clock.advance(by: .seconds(29 * 60))
        let ended = try await state(ride.backend, ride.token)
        #expect(ended.status == 200 && ended.json["ended"] as? Bool == true)
        await ride.backend.clock.advance(by: .seconds(61))
        let page = await ride.backend.call("GET", APIPath.share(ride.token), token: nil)
        #expect(page.status == 410)
        #expect(String(decoding: page.body, as: UTF8.self).contains("This trip has ended"))
    }
}
