import Foundation
import Synchronization
import Testing
import HTTPTransport
import EnRouteModels
import TestSupport
import RideHailing
@testable import enroute

/// `enroute ride`'s money flags: the card to pay with, and answering the sandbox challenge.
@MainActor
@Suite struct RideCommandTests {
    /// Answers from a script in order and records each request; an unscripted call fails the test.
    final class Script: HTTPClient {
        private let answers: Mutex<[HTTPClientResponse]>
        private let seen = Mutex<[HTTPClientRequest]>([])
        init(_ answers: [HTTPClientResponse]) { self.answers = Mutex(answers) }
        var requests: [String] { seen.withLock { $0.map { "\($0.method) \($0.url.absoluteString)" } } }
        var keys: [String?] { seen.withLock { $0.map { $0.headers["Idempotency-Key"] } } }
        var bodies: [Data?] { seen.withLock { $0.map(\.body) } }

        func send(_ request: HTTPClientRequest) async throws -> HTTPClientResponse {
            seen.withLock { $0.append(request) }
            guard let answer = answers.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) else {
                Issue.record("unexpected \(request.method) \(request.url)")
                throw HTTPClientError.network("unscripted")
            }
            return answer
        }
        func events(_ request: HTTPClientRequest) -> AsyncThrowingStream<ServerSentEvent, any Error> {
            AsyncThrowingStream { $0.finish(throwing: HTTPClientError.network("no streams here")) }
        }
    }

    static let base = URL(string: "http://127.0.0.1:8080")!
    static let pickup = Coordinate(lat: 60.1699, lng: 24.9384), dropoff = Coordinate(lat: 60.1841, lng: 24.95)

    static func json(_ value: some Encodable, status: Int = 200) throws -> HTTPClientResponse {
        HTTPClientResponse(
            status: status, headers: ["Content-Type": "application/json"], body: try WireCoding.encoder().encode(value))
    }

    static func challenge(at url: URL) throws -> HTTPClientResponse {
        try json(
            PaymentProblem(
                type: PaymentProblemType.actionRequired, title: "Confirm with your bank",
                detail: "Your bank asks you to confirm.",
                actionURL: url), status: 402)
    }

    /// A ride screen over `script` that has loaded one economy quote `q1` and confirmed it.
    func confirmed(_ script: Script) async -> TripViewModel {
        let server = APIServer(baseURL: Self.base, credentials: StaticAccessToken("t"))
        let api = RemoteTripAPI(client: script, server: server)
        let viewModel = TripViewModel(
            api: api, channel: SSELiveTripChannel(client: script, server: server), clock: ManualClock(),
            logger: StandardErrorRideLogger(), payments: api)
        await viewModel.loadEstimates(pickup: Self.pickup, dropoff: Self.dropoff)
        await viewModel.confirm(productID: "economy")
        return viewModel
    }

    static let quote = Estimate(
        productID: "economy", fare: Money(amountMinor: 1250, currency: "EUR"), etaSeconds: 180, quoteId: "q1")
    static let challengeURL = URL(string: "http://127.0.0.1:8080/v1/payments/sandbox/challenges/pi_1")!

    @Test func withAnswerChallengeTheSandboxChallengeIsPostedAndTheSameQuoteRequestedAgain() async throws {
        let trip = Trip(id: "T-1", state: .noDriversFound, pickup: Self.pickup, dropoff: Self.dropoff, version: 2)
        let script = Script([
            try Self.json([Self.quote]), try Self.challenge(at: Self.challengeURL),
            HTTPClientResponse(status: 200), try Self.json(trip, status: 201),
        ])
        let viewModel = await confirmed(script)
        let server = APIServer(baseURL: Self.base, credentials: StaticAccessToken("t"))

        let status = try await RideCommand.answerRefusals(
            viewModel, product: "economy", answerChallenge: true, http: script, server: server)
        #expect(status == nil)
        #expect(
            script.requests == [
                "POST http://127.0.0.1:8080/v1/estimates", "POST http://127.0.0.1:8080/v1/trips",
                "POST http://127.0.0.1:8080/v1/payments/sandbox/challenges/pi_1", "POST http://127.0.0.1:8080/v1/trips",
            ])
        let requests = try [1, 3].map {
            try WireCoding.decoder().decode(TripRequest.self, from: try #require(script.bodies[$0]))
        }
        #expect(requests.map(\.quoteId) == ["q1", "q1"])
        #expect(script.keys[1] != nil && script.keys[3] != nil && script.keys[1] != script.keys[3])
        #expect(viewModel.state.trip?.id == "T-1")
    }

    @Test func withoutAnswerChallengeTheCommandStopsWithThePaymentStatus() async throws {
        let script = Script([try Self.json([Self.quote]), try Self.challenge(at: Self.challengeURL)])
        let viewModel = await confirmed(script)
        let server = APIServer(baseURL: Self.base, credentials: StaticAccessToken("t"))
        #expect(
            try await RideCommand.answerRefusals(
                viewModel, product: "economy", answerChallenge: false, http: script, server: server) == 2)
        #expect(script.requests.count == 2)
    }

    /// The challenge request carries the rider's token: it goes to the server's own origin only.
    @Test func aChallengeOnAnotherOriginIsNotPosted() async throws {
        let script = Script([
            try Self.json([Self.quote]), try Self.challenge(at: URL(string: "https://bank.example/3ds/pi_1")!),
        ])
        let viewModel = await confirmed(script)
        let server = APIServer(baseURL: Self.base, credentials: StaticAccessToken("t"))
        #expect(
            try await RideCommand.answerRefusals(
                viewModel, product: "economy", answerChallenge: true, http: script, server: server) == 2)
        #expect(script.requests.count == 2)
    }

    @Test func aDeclinedCardStopsWithThePaymentStatus() async throws {
        let declined = PaymentProblem(
            type: PaymentProblemType.declined, title: "Card declined", detail: "Declined.",
            declineCode: "generic_decline")
        let script = Script([
            try Self.json([Self.quote]), try Self.json(declined, status: 402),
            try Self.json(PaymentMethodList(methods: [])),
        ])
        let viewModel = await confirmed(script)
        let server = APIServer(baseURL: Self.base, credentials: StaticAccessToken("t"))
        #expect(
            try await RideCommand.answerRefusals(
                viewModel, product: "economy", answerChallenge: true, http: script, server: server) == 2)
        #expect(viewModel.state.prompt?.message == "Your card was declined. Try another card.")
    }

    @Test(arguments: [
        ("pm_card_visa", true), ("pm_card_authenticationRequired", true), ("visa", false), ("pm_", false),
        ("pm_card visa", false), ("pm_card-visa", false),
    ])
    func theCardMustBeAPaymentMethodToken(text: String, valid: Bool) {
        #expect(RideCommand.isPaymentMethodToken(text) == valid)
    }

    @Test func aMalformedCardIsAUsageErrorBeforeAnyRequest() async {
        #expect(
            await CommandLineTool.run([
                "ride", "--from", "60.1,24.9", "--to", "60.2,24.9", "--card", "visa", "--token", "t",
                "--server", "http://127.0.0.1:1",
            ]) == 64)
    }

    @Test func mistypedMoneyFlagsNameTheClosestOne() throws {
        #expect(throws: CLIError("unknown option --crad (did you mean --card?)")) {
            try RideCommand.spec.parse(["--crad", "pm_card_visa"], environment: [:])
        }
        #expect(throws: CLIError("--answer-challenge takes no value")) {
            try RideCommand.spec.parse(["--answer-challenge=yes"], environment: [:])
        }
    }
}
