import Foundation
import Testing
import EnRouteModels
import EnRouteWeb
import HTTPEngine
import TestSupport

/// The share page and the ops console in headless Chromium, against the production backend on a real socket whose
/// clock the test drives: time passes by advancing the server's ManualClock, never by waiting.
/// Chromium missing is a failure naming scripts/install-web.sh, never a skip.
@Suite(.serialized) struct BrowserTests {
    static let artefacts = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent(".build/artefacts")

    struct Live {
        let backend: TestBackend
        let server: HTTPServer
        let base: String
    }

    func makeSUT() async throws -> Live {
        let routing = try await TestRoads.helsinki()
        var web = WebConfiguration()
        web.shareLinkLifetime = 3600
        let backend = TestBackend(web: web, roadMap: RoadMap(network: routing.graph.network))
        var config = HTTPServerConfiguration()
        config.port = 0
        let server = HTTPServer(router: backend.router, configuration: config)
        try server.start()
        return Live(backend: backend, server: server, base: "http://127.0.0.1:\(server.port)")
    }

    /// Runs `body` with a browser, then always closes the page's streams, the browser and the server, in that order:
    /// the streams' producers wake on the next tick of the manual clock, find their client gone and end, so the
    /// server never stops with a connection still suspended.
    func withBrowser(_ live: Live, _ body: (WebDriver) async throws -> Void) async throws {
        let browser: WebDriver
        do { browser = try await WebDriver() } catch { await live.server.shutdown(); throw error }
        let outcome: Result<Void, any Error>
        do { try await body(browser); outcome = .success(()) } catch { outcome = .failure(error) }
        try? await browser.open("about:blank")
        await browser.quit()
        await live.backend.clock.advance(by: .seconds(6))
        await live.server.shutdown()
        try outcome.get()
    }

    func save(_ png: Data, _ name: String) throws {
        try FileManager.default.createDirectory(at: Self.artefacts, withIntermediateDirectories: true)
        try png.write(to: Self.artefacts.appendingPathComponent(name))
    }

    @Test func theSharePageFollowsTheRideDimsAndHidesThePinAndEnds() async throws {
        let live = try await makeSUT()
        let ride = try await SharedRide.make(live.backend, fixAt: Coordinate(lat: 60.1705, lng: 24.9400))
        try await withBrowser(live) { browser in
            try await browser.open(live.base + APIPath.share(ride.token))
            #expect(
                try await browser.waitUntil(
                    "document.querySelectorAll('#steps li').length === 5 && document.body.dataset.pin === 'live'"),
                "the steps and a live pin")
            #expect(try await browser.waitUntil("document.body.dataset.map === 'roads'"), "the road map from the graph")
            #expect(
                try await browser.run("return document.querySelector('.leaflet-control-attribution').textContent")
                    as? String
                    == "© OpenStreetMap contributors, ODbL")
            #expect(
                try await browser.run("return document.querySelector('#steps li.current').textContent") as? String
                    == "Driver on the way")

            // 15 s later, about 180 m on: a plausible drive, so ingest keeps it.
            await live.backend.clock.advance(by: .seconds(15))
            try await SharedRide.fix(live.backend, Coordinate(lat: 60.1712, lng: 24.9431))
            #expect(
                try await browser.waitUntil(
                    "document.body.dataset.pin === 'live' && Math.abs(enrouteShare.state.pin.lat - 60.1712) < 0.0003"),
                "the pin moves with the new fix")
            try save(try await browser.screenshot(), "share-live.png")

            await live.backend.clock.advance(by: .seconds(21))
            #expect(
                try await browser.waitUntil(
                    "document.body.dataset.pin === 'stale' && "
                        + "document.getElementById('pin-label').textContent.startsWith('Updated')"
                ),
                "dimmed with its age after 20 s")
            try save(try await browser.screenshot(), "share-stale.png")
            await live.backend.clock.advance(by: .seconds(100))
            #expect(
                try await browser.waitUntil(
                    "document.body.dataset.pin === 'hidden' && document.getElementById('eta').textContent === "
                        + "'ETA updating'"
                ),
                "hidden after 2 minutes")

            await live.backend.clock.advance(by: .seconds(3600))
            #expect(
                try await browser.waitUntil("document.body.dataset.page === 'gone'"),
                "the expired link reloads to the ended page")
            #expect(
                try await browser.run("return document.getElementById('title').textContent") as? String
                    == "This trip has ended")
            try save(try await browser.screenshot(), "share-ended.png")
        }
    }

    @Test func theConsoleShowsANewTripWithin2Seconds() async throws {
        let live = try await makeSUT()
        _ = try await SharedRide.make(live.backend)
        try await withBrowser(live) { browser in
            try await browser.open(live.base + "/ops#token=" + live.backend.token("ops", .ops))
            #expect(
                try await browser.waitUntil(
                    "document.body.dataset.feed === 'live' && enrouteConsole.overview.trips.length === 1"),
                "the live city")
            #expect(try await browser.run("return location.hash") as? String == "", "the token leaves the address bar")
            let body = try await live.backend.rideBody("c2", pickup: SharedRide.pickup, dropoff: SharedRide.dropoff)
            let created = await live.backend.call(
                "POST", APIPath.trips, token: live.backend.token("c2", .customer), json: body,
                headers: ["Idempotency-Key": UUID().uuidString])
            let id = try WireCoding.decoder().decode(Trip.self, from: Data(created.body)).id
            #expect(
                try await browser.waitUntil(
                    "enrouteConsole.overview.trips.some(t => t.id === '\(id)')", milliseconds: 2_000),
                "a new trip within 2 s")
            #expect(
                try await browser.waitUntil(
                    "document.querySelector('tr.trip[data-id=\"\(id)\"]') !== null", milliseconds: 2_000))
            _ = try await browser.run(
                "document.getElementById('trip-id').value = '\(id)'; document.querySelector('#search button').click(); "
                    + "return true"
            )
            #expect(
                try await browser.waitUntil("document.getElementById('detail-title').textContent === 'Trip \(id)'"),
                "search by trip id")
            #expect(try await browser.waitUntil("document.body.dataset.map === 'roads'"))
            try save(try await browser.screenshot(), "ops-console.png")
        }
    }
}
