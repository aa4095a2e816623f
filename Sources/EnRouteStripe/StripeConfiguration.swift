public import Foundation

/// How the gateway reaches Stripe: the secret key, the API's base URL, the pinned API version, where a bank challenge
/// returns.
public struct StripeConfiguration: Sendable {
    /// The secret API key (`sk_test_…` or `sk_live_…`); the caller reads it from `ENROUTE_STRIPE_KEY`.
    public var secretKey: String
    /// Stripe's API root; a stand-in's address in tests.
    public var baseURL: URL
    /// The `Stripe-Version` every request pins, so the account's default version cannot change the answers.
    public var apiVersion: String
    /// Where the bank's challenge page sends the customer back (`return_url`).
    public var returnURL: URL
    /// How long one request may take before it counts as ambiguous.
    public var timeout: Duration

    /// Stripe's defaults: the live API root, API version 2024-06-20, 30 s per request.
    public init(
        secretKey: String, returnURL: URL, baseURL: URL = URL(string: "https://api.stripe.com")!,
        apiVersion: String = "2024-06-20", timeout: Duration = .seconds(30)
    ) {
        self.secretKey = secretKey; self.returnURL = returnURL; self.baseURL = baseURL; self.apiVersion = apiVersion;
        self.timeout = timeout
    }
}

/// How often and how patiently the gateway retries after an ambiguous answer; the pause is an effect the caller gives.
public struct StripeRetryPolicy: Sendable {
    /// Retries after the first attempt; each first finds out what happened (a retrieve or a search).
    public var retries: Int
    /// The pause before retry n (the last one repeats).
    public var delays: [Duration]
    /// Waits for a pause: `clock.sleep(for:)` in production, a recorder in tests.
    public var sleep: @Sendable (Duration) async throws -> Void

    /// Two retries after 0.5 s and 2 s, waiting with `sleep`.
    public init(
        retries: Int = 2, delays: [Duration] = [.milliseconds(500), .seconds(2)],
        sleep: @escaping @Sendable (Duration) async throws -> Void
    ) {
        self.retries = retries; self.delays = delays; self.sleep = sleep
    }

    /// The pause before retry `attempt` (1-based).
    func delay(before attempt: Int) -> Duration {
        delays.isEmpty ? .zero : delays[min(attempt - 1, delays.count - 1)]
    }
}
