import Foundation
import Testing
import HTTPTransport
import EnRouteModels
@testable import RideHailing

@Suite struct RemoteTripAPITests {
    private func makeSUT(_ answers: HTTPClientResponse...) -> (RemoteTripAPI, ScriptedHTTPClient) {
        let client = ScriptedHTTPClient(answers: answers)
        let server = APIServer(
            baseURL: URL(string: "https://api.enroute.test")!, credentials: StaticAccessToken("rider-token"))
        return (RemoteTripAPI(client: client, server: server), client)
    }

    private func body<T: Decodable>(_ type: T.Type, of request: HTTPClientRequest) throws -> T {
        try WireCoding.decoder().decode(T.self, from: try #require(request.body))
    }

    @Test func estimatePostsPickupAndDropoffAsJSON() async throws {
        let estimates = [
            Estimate(productID: "economy", fare: Money(amountMinor: 1250, currency: "EUR"), etaSeconds: 240)
        ]
        let (api, client) = makeSUT(try .json(estimates))

        #expect(try await api.estimate(pickup: Fixtures.pickup, dropoff: Fixtures.dropoff) == estimates)

        let request = try #require(client.requests.first)
        #expect(request.method == "POST")
        #expect(request.url.absoluteString == "https://api.enroute.test/v1/estimates")
        #expect(request.headers["Authorization"] == "Bearer rider-token")
        #expect(request.headers["Content-Type"] == "application/json")
        #expect(
            try body(EstimateRequest.self, of: request)
                == EstimateRequest(pickup: Fixtures.pickup, dropoff: Fixtures.dropoff))
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
        #expect(
            try body(CancelRequest.self, of: try #require(client.requests.first))
                == CancelRequest(reason: "changed my mind"))
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

/// The money calls on the wire: the refusals of a request read from their problem documents, and the payment, receipt,
/// tip, rating and history endpoints.
@Suite struct RemoteTripAPIMoneyTests {
    private func makeSUT(_ answers: HTTPClientResponse...) -> (RemoteTripAPI, ScriptedHTTPClient) {
        let client = ScriptedHTTPClient(answers: answers)
        let server = APIServer(
            baseURL: URL(string: "https://api.enroute.test")!, credentials: StaticAccessToken("rider-token"))
        return (RemoteTripAPI(client: client, server: server), client)
    }

    private static func problem(_ json: String, status: Int) -> HTTPClientResponse {
        HTTPClientResponse(status: status, headers: ["Content-Type": "application/problem+json"], body: Data(json.utf8))
    }

    @Test func aDeclineIsAPaymentRefusalWithItsCodeAndNextStep() async throws {
        let (api, _) = makeSUT(
            Self.problem(
                """
                {"type":"https://enroute.invalid/problems/payment-declined","title":"Card declined","status":402,
                 "detail":"Your card has insufficient funds.","declineCode":"insufficient_funds","nextStep":"Try \
                another card."}
                """, status: 402))
        await #expect(
            throws: RideRequestRefusal.payment(
                PaymentProblem(
                    type: PaymentProblemType.declined, title: "Card declined",
                    detail: "Your card has insufficient funds.",
                    declineCode: "insufficient_funds", nextStep: "Try another card."))
        ) {
            try await api.requestTrip(Fixtures.request, idempotencyKey: Fixtures.key(1))
        }
    }

    @Test func aChallengeCarriesItsURL() async throws {
        let (api, _) = makeSUT(
            Self.problem(
                """
                {"type":"https://enroute.invalid/problems/payment-action-required","title":"Confirm with your \
                bank","status":402,
                 "detail":"Your bank asks you to \
                confirm.","actionURL":"https://api.enroute.test/v1/payments/sandbox/challenges/pi_1"}
                """, status: 402))
        do {
            _ = try await api.requestTrip(Fixtures.request, idempotencyKey: Fixtures.key(1))
            Issue.record("no refusal")
        } catch RideRequestRefusal.payment(let problem) {
            #expect(
                RideRequestPrompt(problem)
                    == .challenge(URL(string: "https://api.enroute.test/v1/payments/sandbox/challenges/pi_1")!))
        }
    }

    @Test func aQuoteExpiredConflictCarriesTheFreshQuote() async throws {
        let fresh = Fixtures.quote("q2", fare: 1310)
        let (api, _) = makeSUT(try .json(QuoteExpiredProblem(detail: "The quote expired.", quote: fresh), status: 409))
        await #expect(throws: RideRequestRefusal.quoteExpired(fresh: fresh)) {
            try await api.requestTrip(Fixtures.request, idempotencyKey: Fixtures.key(1))
        }
    }

    @Test func anotherConflictStaysAnAPIError() async throws {
        let (api, _) = makeSUT(
            Self.problem(#"{"type":"about:blank","title":"Conflict","status":409,"detail":"Key reused."}"#, status: 409)
        )
        await #expect(throws: APIError.problem(Problem(title: "Conflict", status: 409, detail: "Key reused."))) {
            try await api.requestTrip(Fixtures.request, idempotencyKey: Fixtures.key(1))
        }
    }

    @Test func anUnknownQuoteIsARejectionNamingIt() async throws {
        let (api, _) = makeSUT(
            try .json(
                Problem(
                    title: "Invalid request", status: 422,
                    errors: [.init(pointer: "/quoteId", detail: "is not a quote of this account")]), status: 422))
        await #expect(throws: RideRequestRefusal.quoteRejected(detail: "is not a quote of this account")) {
            try await api.requestTrip(Fixtures.request, idempotencyKey: Fixtures.key(1))
        }
    }

    @Test func savingACardPostsItsTokenOnly() async throws {
        let (api, client) = makeSUT(try .json(Fixtures.visa, status: 201))
        #expect(try await api.addPaymentMethod(token: "pm_card_visa", makeDefault: true) == Fixtures.visa)
        let request = try #require(client.requests.first)
        #expect("\(request.method) \(request.url.path)" == "POST /v1/payment-methods")
        #expect(
            try WireCoding.decoder().decode(PaymentMethodRequest.self, from: try #require(request.body))
                == PaymentMethodRequest(token: "pm_card_visa", makeDefault: true))
    }

    @Test func settlingSendsAnIdempotencyKeyAndADeclineIsARefusal() async throws {
        let (api, client) = makeSUT(
            try .json(AccountBalance(outstanding: Fixtures.eur(0), tripIds: [])),
            try .json(Fixtures.problem(PaymentProblemType.declined, declineCode: "generic_decline"), status: 402))
        #expect(try await api.settleBalance(idempotencyKey: Fixtures.key(3)).outstanding == Fixtures.eur(0))
        #expect(client.requests.first?.headers["Idempotency-Key"] == Fixtures.key(3).uuidString)
        #expect(client.requests.first?.url.path == "/v1/account/balance/settle")
        await #expect(
            throws: RideRequestRefusal.payment(
                Fixtures.problem(PaymentProblemType.declined, declineCode: "generic_decline"))
        ) {
            try await api.settleBalance(idempotencyKey: Fixtures.key(4))
        }
    }

    @Test func receiptTipRatingAndHistoryUseTheirPaths() async throws {
        let (api, client) = makeSUT(
            try .json(Fixtures.receipt()),
            HTTPClientResponse(status: 201),
            HTTPClientResponse(status: 204),
            try .json(TripSnapshotList(trips: [Fixtures.snapshot("T-9")], nextCursor: "c2")))
        #expect(try await api.receipt(tripID: "T-1") == Fixtures.receipt())
        try await api.tip(tripID: "T-1", amountMinor: 300, idempotencyKey: Fixtures.key(5))
        try await api.rate(tripID: "T-1", stars: 5, comment: nil)
        #expect(try await api.history(cursor: "c/1", limit: 20).nextCursor == "c2")

        #expect(
            client.requests.map { "\($0.method) \($0.url.path)" } == [
                "GET /v1/trips/T-1/receipt", "POST /v1/trips/T-1/tip", "POST /v1/trips/T-1/rating", "GET /v1/trips",
            ])
        #expect(client.requests[1].headers["Idempotency-Key"] == Fixtures.key(5).uuidString)
        #expect(
            try WireCoding.decoder().decode(TipRequest.self, from: try #require(client.requests[1].body))
                == TipRequest(amountMinor: 300))
        #expect(client.requests[3].url.query == "cursor=c%2F1&limit=20")
    }

    @Test func aReceiptNotReadyIsA404() async throws {
        let (api, _) = makeSUT(
            Self.problem(
                #"{"type":"about:blank","title":"Not Found","status":404,"detail":"Not settled yet."}"#, status: 404))
        await #expect(throws: APIError.problem(Problem(title: "Not Found", status: 404, detail: "Not settled yet."))) {
            try await api.receipt(tripID: "T-1")
        }
    }
}
