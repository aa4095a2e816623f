import Foundation
import Testing
import HTTPTransport
import CurlTransport
import EnRouteModels
import TestSupport

/// The real `enroute serve` on Stripe's API (the stand-in), killed with SIGKILL after Stripe placed a hold and before
/// the trip was committed, then restarted on the same database: the retried request takes that hold, and no second one.
@Suite(.serialized) struct PaymentCrashTests {
    static let secret = "payment-crash-test-secret-0123456789"

    /// `enroute serve` on Stripe's API at the stand-in.
    static func server(_ database: String, _ stripe: StripeStandIn) throws -> DurabilityTests.Server {
        try DurabilityTests.Server(
            database: database, secret: secret,
            arguments: [
                "--payments", "stripe", "--stripe-url", stripe.baseURL.absoluteString, "--public-url",
                "http://127.0.0.1:1",
            ],
            environment: ["ENROUTE_STRIPE_KEY": stripe.apiKey], seed: false)
    }

    static func call(
        _ http: CurlHTTPClient, _ server: DurabilityTests.Server, _ token: String, _ method: String, _ path: String,
        json: String? = nil,
        key: String? = nil
    ) async throws -> HTTPClientResponse {
        var headers = ["Authorization": "Bearer \(token)"]
        if json != nil { headers["Content-Type"] = "application/json" }
        if let key { headers["Idempotency-Key"] = key }
        return try await http.send(
            HTTPClientRequest(
                method: method, url: URL(string: "http://127.0.0.1:\(server.port)\(path)")!, headers: headers,
                body: json.map { Data($0.utf8) }, timeout: .seconds(10)))
    }

    static func token(_ account: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("enroute")
        process.arguments = ["token", "--account", account, "--role", "customer", "--secret", secret]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        process.waitUntilExit()
        return String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).trimmingCharacters(
            in: .whitespacesAndNewlines)
    }

    @Test func aServerKilledBetweenTheHoldAndTheTripsCommitLeavesNeitherATripWithoutAHoldNorASecondHold() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "enroute-crash-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let database = directory.appendingPathComponent("enroute.sqlite").path
        let stripe = try StripeStandIn()
        let http = CurlHTTPClient()
        let token = try Self.token("c1")

        let first = try Self.server(database, stripe)
        #expect(
            try await Self.call(http, first, token, "POST", APIPath.paymentMethods, json: #"{"token":"pm_card_visa"}"#)
                .status == 201)
        let quotes = try await Self.call(
            http, first, token, "POST", APIPath.estimates,
            json: #"{"pickup":\#(TestBackend.pickup),"dropoff":\#(TestBackend.dropoff)}"#)
        let quote = try #require(try WireCoding.decoder().decode([Estimate].self, from: quotes.body).first?.quoteId)
        let body =
            #"{"pickup":\#(TestBackend.pickup),"dropoff":\#(TestBackend.dropoff),"productID":"economy","#
            + #""quoteId":"\#(quote)"}"#

        // Stripe places the hold; the server dies before it hears back, so the trip is never committed.
        let pid = first.pid
        stripe.onApplied { request in
            if request.method == "POST", request.path == "/v1/payment_intents" { kill(pid, SIGKILL) }
        }
        await #expect(throws: (any Error).self) {
            _ = try await Self.call(
                http, first, token, "POST", APIPath.trips, json: body, key: "crash-between-hold-and-commit")
        }
        first.process.waitUntilExit()
        stripe.onApplied(nil)
        #expect(stripe.intents.map(\.status) == ["requires_capture"], "the hold exists at the gateway")

        // Restarted on the same file, the client's retry (same key) takes that hold: one trip, one hold.
        let second = try Self.server(database, stripe)
        defer { second.stop() }
        let retried = try await Self.call(
            http, second, token, "POST", APIPath.trips, json: body, key: "crash-between-hold-and-commit")
        #expect(retried.status == 201, "\(String(decoding: retried.body, as: UTF8.self))")
        let trip = try WireCoding.decoder().decode(Trip.self, from: retried.body)
        #expect(trip.fare?.amountMinor == stripe.intents.first?.amountCapturable)
        #expect(stripe.intents.count == 1, "never a second hold")
        let replay = try await Self.call(
            http, second, token, "POST", APIPath.trips, json: body, key: "crash-between-hold-and-commit")
        #expect(
            replay.status == 201
                && replay.headers.first { $0.key.lowercased() == "idempotent-replayed" }?.value == "true")
        await stripe.shutdown()
    }
}
