import Foundation
import ClientKit
import HTTPTransport
import CurlTransport
import EnRouteModels
import RideHailing

/// `enroute ride --from LAT,LNG --to LAT,LNG`: the rider app in a terminal, on the client kit.
enum RideCommand {
    static let spec = CommandSpec(
        name: "ride",
        synopsis: """
            Usage: enroute ride --from LAT,LNG --to LAT,LNG [--product ID] [--card TOKEN] [--answer-challenge] \
            [--server URL] [--token T]

            Saves the test card, shows the estimates, confirms the product's quote (one Idempotency-Key per request,
            reused on retries), then watches the trip live: its state, the driver, the ETA and the driver's marker
            interpolated between fixes; after the ride, prints the receipt. Ctrl-C cancels the ride (while it can
            still be cancelled) and exits. Exits 0 after a completed ride, 2 when the payment was refused (declined
            card, unanswered bank challenge, outstanding balance, a card the server refused), 3 when the ride
            ended otherwise.
            """,
        sections: [
            (
                nil,
                [
                    .value("from", "LAT,LNG", "Pickup."),
                    .value("to", "LAT,LNG", "Drop-off."),
                    .value("product", "ID", "economy (default) or xl."),
                    .value(
                        "card", "TOKEN",
                        "The card to pay with, as a Stripe test payment method (default pm_card_visa;\n"
                            + "pm_card_visa_chargeDeclined, pm_card_authenticationRequired, ...), saved first."),
                    .flag(
                        "answer-challenge",
                        "Answer the sandbox bank challenge and repeat the request; without it the\n"
                            + "challenge's URL is printed and the command exits 2."),
                ] + Terminal.serverOptions(role: "customer")
            )
        ])

    /// Exit status when the payment was refused.
    static let paymentRefused: Int32 = 2

    @MainActor
    static func run(_ args: [String]) async throws -> Int32 {
        let options = try spec.parse(args)
        if options.has("help") { print(spec.helpText); return 0 }
        let from = try Terminal.coordinate(options.string("from"), flag: "from")
        let to = try Terminal.coordinate(options.string("to"), flag: "to")
        let card = options.string("card") ?? "pm_card_visa"
        guard isPaymentMethodToken(card) else {
            throw CLIError("--card must be a payment method token such as pm_card_visa, got '\(card)'")
        }
        let (url, token) = try Terminal.server(options)
        let server = APIServer(baseURL: url, credentials: StaticAccessToken(token))
        let http = CurlHTTPClient()
        let clock = ContinuousClock()
        let api = RemoteTripAPI(client: http, server: server)

        let saved: PaymentMethodSummary
        do {
            saved = try await api.addPaymentMethod(token: card, makeDefault: true)
        } catch APIError.problem(let problem) {
            FileHandle.standardError.write(
                Data("enroute ride: the card \(card) was not saved: \(problem.detail ?? problem.title)\n".utf8))
            return paymentRefused
        }

        let viewModel = TripViewModel(
            api: api, channel: SSELiveTripChannel(client: http, server: server), clock: clock,
            logger: StandardErrorRideLogger(), payments: api, dates: SystemDateProvider())
        let pickup = Coordinate(lat: from.lat, lng: from.lng), dropoff = Coordinate(lat: to.lat, lng: to.lng)
        await viewModel.loadEstimates(pickup: pickup, dropoff: dropoff)
        let product = options.string("product") ?? "economy"
        guard viewModel.state.estimates.contains(where: { $0.productID == product }) else {
            Terminal.redraw(RideScreen.render(viewModel.state, marker: nil))
            throw CLIError(viewModel.state.errorMessage ?? "no estimate for product \(product)")
        }

        // Ctrl-C cancels the ride rather than leaving it searching.
        let interrupted = AsyncStream<Int32>.makeStream()
        SignalCatcher.start([SIGINT], into: interrupted.continuation)

        print("Paying with \(saved.brand.capitalized) ···· \(saved.last4)")
        await viewModel.confirm(productID: product)
        if let refused = try await answerRefusals(
            viewModel, product: product, answerChallenge: options.has("answer-challenge"),
            http: http, server: server)
        {
            return refused
        }
        if let message = viewModel.state.errorMessage, viewModel.state.trip == nil {
            Terminal.redraw(RideScreen.render(viewModel.state, marker: nil))
            throw CLIError(message)
        }
        let watcher = Task { @MainActor in await viewModel.waitForLiveToEnd() }
        let cancelOnInterrupt = Task { @MainActor in
            for await _ in interrupted.stream {
                if viewModel.state.canCancel { await viewModel.cancelTrip() } else { viewModel.stopLive() }
            }
        }
        defer { cancelOnInterrupt.cancel() }
        while true {
            Terminal.redraw(
                ["EnRoute · ride", ""] + RideScreen.render(viewModel.state, marker: viewModel.markerFrame()))
            if let trip = viewModel.state.trip, !trip.state.isActive {
                await watcher.value
                guard trip.state == .completed else { return 3 }
                await printReceipt(tripID: trip.id, api: api, clock: clock)
                return 0
            }
            try await clock.sleep(for: .milliseconds(250))
        }
    }

    /// Answers what the server asked before creating the trip: a new price is confirmed once, out loud; a sandbox
    /// challenge is answered when `answerChallenge`; anything else is printed. Returns the exit status when the ride
    /// cannot go ahead, nil when it can (or failed in a way the caller reports).
    @MainActor
    static func answerRefusals(
        _ viewModel: TripViewModel, product: String, answerChallenge: Bool,
        http: any HTTPClient, server: APIServer
    ) async throws -> Int32? {
        var confirmedNewPrice = false, answeredChallenge = false
        while viewModel.state.trip == nil, let prompt = viewModel.state.prompt {
            print(prompt.message)
            switch prompt {
            case .confirmNewPrice where !confirmedNewPrice:
                confirmedNewPrice = true
                print("Confirming at the new price.")
                await viewModel.confirm(productID: product)
            case .challenge(let url) where !answeredChallenge:
                print("  \(url.absoluteString)")
                guard answerChallenge else {
                    FileHandle.standardError.write(
                        Data(
                            ("enroute ride: open the link to answer the challenge, or run with --answer-challenge "
                                + "(sandbox)\n").utf8))
                    return paymentRefused
                }
                answeredChallenge = true
                guard try await answerSandboxChallenge(url, http: http, server: server) else { return paymentRefused }
                print("Challenge answered; requesting again with the same quote.")
                await viewModel.challengeAnswered()
            default:
                return paymentRefused
            }
        }
        return nil
    }

    /// POSTs the sandbox gateway's challenge URL as the customer would answer it; only on the server's own origin,
    /// since the request carries the bearer token.
    private static func answerSandboxChallenge(_ url: URL, http: any HTTPClient, server: APIServer) async throws -> Bool
    {
        guard url.scheme == server.baseURL.scheme, url.host == server.baseURL.host, url.port == server.baseURL.port
        else {
            FileHandle.standardError.write(
                Data(
                    "enroute ride: the challenge is not on \(server.baseURL.absoluteString); answer it in a browser\n"
                        .utf8))
            return false
        }
        let response = try await http.send(await server.request("POST", url.absoluteString))
        guard (200..<300).contains(response.status) else {
            let detail =
                (try? WireCoding.decoder().decode(Problem.self, from: response.body)).map { $0.detail ?? $0.title }
                ?? "status \(response.status)"
            FileHandle.standardError.write(Data("enroute ride: the challenge was not answered: \(detail)\n".utf8))
            return false
        }
        return true
    }

    /// Waits (politely) for the receipt once the payment settles, and prints it.
    @MainActor
    private static func printReceipt(tripID: String, api: RemoteTripAPI, clock: ContinuousClock) async {
        print("Waiting for the receipt…")
        let receipt = ReceiptViewModel(tripID: tripID, api: api, clock: clock)
        await receipt.load()
        if let shown = receipt.state.receipt {
            print(RideScreen.receipt(shown).joined(separator: "\n"))
        } else {
            FileHandle.standardError.write(Data("enroute ride: \(receipt.state.errorMessage ?? "no receipt")\n".utf8))
        }
    }

    /// `pm_` then letters, digits and underscores: the shape of a Stripe payment method id.
    static func isPaymentMethodToken(_ text: String) -> Bool {
        text.hasPrefix("pm_") && text.count > 3
            && text.dropFirst(3).allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }
    }
}
