import Foundation
import Testing
import ClientKit
import EnRouteModels
@testable import RideHailing

@Suite struct RemoteTripAPITests {
    private func makeSUT(_ answers: HTTPClientResponse...) -> (RemoteTripAPI, ScriptedHTTPClient) {
        let client = ScriptedHTTPClient(answers: answers)
        let server = APIServer(baseURL: URL(string: "https://api.enroute.test")!, credentials: StaticAccessToken("rider-token"))
        return (RemoteTripAPI(client: client, server: server), client)
    }

    private func body<T: Decodable>(_ type: T.Type, of request: HTTPClientRequest) throws -> T {
        try WireCoding.decoder().decode(T.self, from: try #require(request.body))
    }

    @Test func estimatePostsPickupAndDropoffAsJSON() async throws {
        let estimates = [Estimate(productID: "economy", fare: Money(amountMinor: 1250, currency: "EUR"), etaSeconds: 240)]
        let (api, client) = makeSUT(try .json(estimates))

        #expect(try await api.estimate(pickup: Fixtures.pickup, dropoff: Fixtures.dropoff) == estimates)

        let request = try #require(client.requests.first)
        #expect(request.method == "POST")
        #expect(request.url.absoluteString == "https://api.enroute.test/v1/estimates")
        #expect(request.headers["Authorization"] == "Bearer rider-token")
        #expect(request.headers["Content-Type"] == "application/json")
        #expect(try body(EstimateRequest.self, of: request) == EstimateRequest(pickup: Fixtures.pickup, dropoff: Fixtures.dropoff))
    }

    @Test func requestTripSendsTheIdempotencyKeyAndTheRequest() async throws {
        let (api, client) = makeSUT(try .json(Fixtures.trip()))
        let key = Fixtures.key(7)

        #expect(try await api.requestTrip(Fixtures.request, idempotencyKey: key) == Fixtures.trip())

        let request = try #require(client.requests.first)
        #expect(request.method == "POST")
        #expect(request.url.path == "/v1/trips")
        #expect(request.headers["Idempotency-Key"] == "00000000-0000-0000-0000-000000000007")
        #expect(try body(TripRequest.self, of: request) == Fixtures.request)
    }

    @Test func activeTripIsNilWhenTheServerAnswersNoContent() async throws {
        let (api, client) = makeSUT(HTTPClientResponse(status: 204))
        #expect(try await api.activeTrip() == nil)
        #expect(client.requests.map { "\($0.method) \($0.url.path)" } == ["GET /v1/trips/active"])
        #expect(client.requests.first?.body == nil)
    }

    @Test func activeTripDecodesTheTrip() async throws {
        let (api, _) = makeSUT(try .json(Fixtures.trip(.driverAssigned, version: 3, eta: 240)))
        #expect(try await api.activeTrip() == Fixtures.trip(.driverAssigned, version: 3, eta: 240))
    }

    @Test func tripGetsItById() async throws {
        let (api, client) = makeSUT(try .json(Fixtures.trip(.onTrip, version: 8)))
        #expect(try await api.trip(id: "T-1").state == .onTrip)
        #expect(client.requests.map { "\($0.method) \($0.url.path)" } == ["GET /v1/trips/T-1"])
    }

    @Test func cancelPostsWithoutABodyAndReturnsTheTrip() async throws {
        let (api, client) = makeSUT(try .json(Fixtures.trip(.cancelled, version: 2)))
        #expect(try await api.cancel(tripID: "T-1") == Fixtures.trip(.cancelled, version: 2))
        let request = try #require(client.requests.first)
        #expect("\(request.method) \(request.url.path)" == "POST /v1/trips/T-1/cancel")
        #expect(request.body == nil)
    }

    @Test func cancelWithAReasonSendsACancelRequest() async throws {
        let (api, client) = makeSUT(try .json(Fixtures.trip(.cancelled, version: 2)))
        _ = try await api.cancel(tripID: "T-1", reason: "changed my mind")
        #expect(try body(CancelRequest.self, of: try #require(client.requests.first)) == CancelRequest(reason: "changed my mind"))
    }

    @Test func aConflictOnCancelThrowsTheProblem() async throws {
        let problem = Problem(title: "Trip can no longer be cancelled", status: 409, detail: "The trip has started.")
        let (api, _) = makeSUT(try .json(problem, status: 409))
        await #expect(throws: APIError.problem(problem)) {
            _ = try await api.cancel(tripID: "T-1")
        }
    }

    @Test(arguments: [500, 401, 404])
    func anErrorWithoutAProblemThrowsTheStatus(status: Int) async throws {
        let (api, _) = makeSUT(HTTPClientResponse(status: status))
        await #expect(throws: APIError.status(status)) {
            _ = try await api.requestTrip(Fixtures.request, idempotencyKey: Fixtures.key(1))
        }
    }

    @Test func nearbyDriversAsksAroundThePoint() async throws {
        let cars = [Coordinate(lat: 60.17, lng: 24.94)]
        let (api, client) = makeSUT(try .json(cars))
        #expect(try await api.nearbyDrivers(around: Coordinate(lat: 60.1699, lng: 24.9384)) == cars)
        let url = try #require(client.requests.first?.url)
        #expect(url.path == "/v1/drivers/nearby")
        #expect(url.query == "lat=60.1699&lng=24.9384")
    }

    @Test func aTripIdCannotChangeThePath() async throws {
        let (api, client) = makeSUT(try .json(Fixtures.trip(.cancelled, version: 2)))
        _ = try await api.cancel(tripID: "../x?y")
        #expect(client.requests.first?.url.absoluteString == "https://api.enroute.test/v1/trips/..%2Fx%3Fy/cancel")
    }
}
