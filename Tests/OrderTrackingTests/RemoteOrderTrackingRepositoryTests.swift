import Foundation
import Testing
import HTTPTransport
import EnRouteModels
import TestSupport
@testable import OrderTracking

@Suite struct RemoteOrderTrackingRepositoryTests {
    private func makeSUT(clock: ManualClock = ManualClock()) -> (RemoteOrderTrackingRepository, FakeHTTPClient) {
        let http = FakeHTTPClient()
        return (RemoteOrderTrackingRepository(http: http, server: FlowServer.server, clock: clock), http)
    }

    @Test func mapsTheSeedSnapshot() async throws {
        let (repository, http) = makeSUT()
        http.answer { _ in FlowServer.tracking(version: 7, status: "onTheWay") }
        let snapshot = try await repository.refresh("8F3K")
        #expect(
            snapshot
                == OrderTracking(
                    orderID: "8F3K", version: 7, status: .onTheWay,
                    eta: Fixture.at(18, 42)...Fixture.at(18, 46),
                    rider: RiderFix(
                        coordinate: Coordinate(lat: 52.52, lng: 13.40), recordedAt: Fixture.at(18, 37, 55),
                        firstName: "Ana"),
                    destination: Coordinate(lat: 52.53, lng: 13.41), generatedAt: Fixture.at(18, 38)))

        let request = try #require(http.requests.first)
        #expect(request.method == "GET")
        #expect(request.url.absoluteString == "https://api.enroute.test/v1/orders/8F3K/tracking")
        #expect(request.headers["Authorization"] == "Bearer T")
        #expect(request.timeout == .seconds(5))
    }

    @Test(arguments: [
        ("problem", String?.some("Rider delayed"), OrderStatus.problem(message: "Rider delayed")),
        ("cancelled", "Items missing", .cancelled(reason: "Items missing")),
        ("cancelled", nil, .cancelled(reason: "")),
        ("delivered", nil, .delivered),
        ("placed", nil, .placed),
    ])
    func mapsTheProblemFieldByStatus(wire: String, problem: String?, expected: OrderStatus) async throws {
        let (repository, http) = makeSUT()
        http.answer { _ in FlowServer.tracking(version: 1, status: wire, problem: problem) }
        #expect(try await repository.refresh("8F3K").status == expected)
    }

    @Test func fetchesActiveOrdersAndPublishesEach() async throws {
        let (repository, http) = makeSUT()
        http.answer { _ in
            let body =
                "{\"orders\": [\(FlowServer.trackingJSON(order: "A", version: 1, status: "picking")), "
                + "\(FlowServer.trackingJSON(order: "B", version: 4, status: "arriving"))]}"
            return HTTPClientResponse(status: 200, body: Data(body.utf8))
        }
        let stream = repository.snapshots()
        let active = try await repository.refreshActive()
        #expect(active.map(\.orderID) == ["A", "B"])
        #expect(http.requests.first?.url.path == "/v1/orders/active")
        var iterator = stream.makeAsyncIterator()
        #expect(await iterator.next()?.orderID == "A")
        #expect(await iterator.next()?.orderID == "B")
    }

    /// The repository doesn't judge: a version 6 arriving after 7 is still published, after it.
    @Test func publishesInArrivalOrderNotVersionOrder() async throws {
        let (repository, http) = makeSUT()
        let stream = repository.snapshots()
        http.answer { _ in FlowServer.tracking(version: 7, status: "onTheWay") }
        try await repository.refresh("8F3K")
        http.answer { _ in FlowServer.tracking(version: 6, status: "picking") }
        try await repository.refresh("8F3K")
        var iterator = stream.makeAsyncIterator()
        #expect(await iterator.next()?.version == 7)
        #expect(await iterator.next()?.version == 6)
    }

    @Test func replaysTheLatestPerOrderOnSubscribe() async throws {
        let (repository, http) = makeSUT()
        let versions = Counter()
        http.answer { request in
            let order = request.url.deletingLastPathComponent().lastPathComponent
            return FlowServer.tracking(order: order, version: versions.next(), status: "onTheWay")
        }
        try await repository.refresh("A")
        try await repository.refresh("B")
        try await repository.refresh("A")
        var late = repository.snapshots().makeAsyncIterator()
        #expect(await late.next().map { [$0.orderID.rawValue: $0.version] } == ["B": 2])
        #expect(await late.next().map { [$0.orderID.rawValue: $0.version] } == ["A": 3])
    }

    @Test func theStreamFinishesWhenTheCallersTaskIsCancelled() async {
        let (repository, _) = makeSUT()
        let consumer = Task {
            var count = 0
            for await _ in repository.snapshots() { count += 1 }
            return count
        }
        consumer.cancel()
        #expect(await consumer.value == 0)
    }

    @Test func surfacesRetryAfterAsAnAPIError() async {
        let (repository, http) = makeSUT()
        http.answer { _ in HTTPClientResponse(status: 429, headers: ["Retry-After": "30"]) }
        await #expect(throws: APIError.retryAfter(.seconds(30), status: 429)) { try await repository.refresh("8F3K") }
    }

    @Test func sendsTheTokenAsHex() async throws {
        let (repository, http) = makeSUT()
        http.answer { _ in HTTPClientResponse(status: 204) }
        try await repository.send(Data([0x0a, 0xff, 0x01]), for: "8F3K")
        let request = try #require(http.requests.first)
        #expect(request.method == "PUT")
        #expect(request.url.path == "/v1/orders/8F3K/live-activity-token")
        let body = try WireCoding.decoder().decode(LiveActivityTokenRequest.self, from: try #require(request.body))
        #expect(body.token == "0aff01")
    }

    @Test func retriesTheTokenOnTheInjectedClockUntilItLands() async throws {
        let clock = ManualClock()
        let (repository, http) = makeSUT(clock: clock)
        let attempts = Counter()
        http.answer { _ in
            switch attempts.next() {
            case 1: throw HTTPClientError.network("reset")
            case 2: return HTTPClientResponse(status: 503)
            default: return HTTPClientResponse(status: 204)
            }
        }
        let upload = Task { try await repository.send(Data([1]), for: "8F3K") }
        await clock.sleepers(atLeast: 1)
        #expect(attempts.current == 1)
        await clock.advance(by: .seconds(1))
        await clock.sleepers(atLeast: 1)
        #expect(attempts.current == 2)
        await clock.advance(by: .seconds(2))
        try await upload.value
        #expect(attempts.current == 3)
    }

    @Test func stopsRetryingTheTokenOnceTheOrderEnds() async throws {
        let clock = ManualClock()
        let (repository, http) = makeSUT(clock: clock)
        http.answer { request in
            request.method == "PUT"
                ? HTTPClientResponse(status: 500) : FlowServer.tracking(version: 9, status: "delivered")
        }
        let upload = Task { try await repository.send(Data([1]), for: "8F3K") }
        await clock.sleepers(atLeast: 1)
        try await repository.refresh("8F3K")
        await clock.advance(by: .seconds(1))
        try await upload.value
        #expect(http.requests.filter { $0.method == "PUT" }.count == 1)
    }

    @Test func doesNotRetryATokenTheServerRejects() async {
        let (repository, http) = makeSUT()
        http.answer { _ in HTTPClientResponse(status: 404) }
        await #expect(throws: APIError.status(404)) { try await repository.send(Data([1]), for: "8F3K") }
    }

    @Test func publishesEachServerSentSnapshot() async throws {
        let (repository, http) = makeSUT()
        http.answerEvents([
            ServerSentEvent(data: FlowServer.trackingJSON(version: 7, status: "onTheWay")),
            ServerSentEvent(data: "not json"),
            ServerSentEvent(data: FlowServer.trackingJSON(version: 8, status: "arriving")),
        ])
        let stream = repository.snapshots()
        try await repository.followEvents(of: "8F3K")
        #expect(http.requests.first?.url.path == "/v1/orders/8F3K/events")
        #expect(http.requests.first?.headers["Accept"] == "text/event-stream")
        var iterator = stream.makeAsyncIterator()
        #expect(await iterator.next()?.version == 7)
        #expect(await iterator.next()?.version == 8)
    }
}
