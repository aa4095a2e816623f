import Foundation
public import HTTPTransport
public import EnRouteDomain

/// Stripe's PaymentIntents behind the domain's `PaymentGateway`: form-encoded requests with Bearer auth and a pinned
/// `Stripe-Version`, through an injected `HTTPClient` (CurlTransport's in production, a loopback stand-in in tests).
///
/// Answers map as: 402 → `.declined` (with the intent the refusal left); 400, 401, 403, 404, 409 → `.rejected` with
/// Stripe's message; 429, 5xx, timeouts and broken connections → `.ambiguous`. After an ambiguous answer the
/// gateway finds out what happened before it retries (see `StripeGateway+Retry.swift`), within `retry`'s bounds.
public struct StripeGateway: PaymentGateway {
    public let name = "stripe"
    /// Where and how Stripe is reached.
    public let configuration: StripeConfiguration
    let client: any HTTPClient
    let retry: StripeRetryPolicy

    /// A gateway on `configuration`, sending through `client`, retrying by `retry`.
    public init(configuration: StripeConfiguration, client: any HTTPClient, retry: StripeRetryPolicy) {
        self.configuration = configuration; self.client = client; self.retry = retry
    }

    public func describe(token: String) async throws(PaymentGatewayError) -> CardDetails {
        let body = try await read("/v1/payment_methods/\(StripeForm.escape(token, keepBrackets: false))")
        guard let method = try? JSONDecoder().decode(StripeWire.PaymentMethod.self, from: body) else {
            throw .ambiguous("Stripe answered GET /v1/payment_methods/\(token) with a body that is not a PaymentMethod")
        }
        guard let card = method.card else { throw .rejected("PaymentMethod \(token) is not a card") }
        return CardDetails(brand: card.brand, last4: card.last4, expMonth: card.exp_month, expYear: card.exp_year)
    }

    public func authorize(_ request: AuthorizationRequest) async throws(PaymentGatewayError) -> GatewayIntent {
        var form = creation(request)
        form.add("capture_method", "manual")
        form.add("return_url", configuration.returnURL.absoluteString)
        return try await create(form, key: request.idempotencyKey)
    }

    public func charge(_ request: AuthorizationRequest) async throws(PaymentGatewayError) -> GatewayIntent {
        var form = creation(request)
        form.add("off_session", "true")
        return try await create(form, key: request.idempotencyKey)
    }

    public func retrieve(intentId: String) async throws(PaymentGatewayError) -> GatewayIntent {
        let body = try await read(Self.intentPath(intentId))
        do { return try decodeIntent(body, "GET \(Self.intentPath(intentId))") } catch { throw error.error }
    }

    public func capture(
        intentId: String, amountMinor: Int, idempotencyKey: String
    ) async throws(PaymentGatewayError) -> GatewayIntent {
        var form = StripeForm()
        form.add("amount_to_capture", String(amountMinor))
        return try await change(intentId, "capture", form, key: idempotencyKey) { $0.status == .succeeded }
    }

    public func cancel(intentId: String, idempotencyKey: String) async throws(PaymentGatewayError) -> GatewayIntent {
        try await change(intentId, "cancel", StripeForm(), key: idempotencyKey) { $0.status == .canceled }
    }

    /// The fields every create sends: the amount on the card, confirmed at once, tagged with the key for `search`.
    private func creation(_ request: AuthorizationRequest) -> StripeForm {
        var form = StripeForm()
        form.add("amount", String(request.amountMinor))
        form.add("currency", request.currency.lowercased())
        form.add("payment_method", request.paymentMethod)
        form.add("payment_method_types[0]", "card")
        form.add("confirm", "true")
        if let customer = request.customer { form.add("customer", customer) }
        form.add("description", request.description)
        form.add("metadata[enroute_key]", request.idempotencyKey)
        return form
    }

    static func intentPath(_ id: String) -> String {
        "/v1/payment_intents/\(StripeForm.escape(id, keepBrackets: false))"
    }

    // MARK: - One request

    /// A failed request: the seam's error, and whether Stripe said it replayed a saved answer (`Idempotent-Replayed`).
    struct Failure: Error {
        var error: PaymentGatewayError
        var replayed = false
        var isAmbiguous: Bool { if case .ambiguous = error { true } else { false } }
    }

    /// One request to Stripe; the body of a 2xx answer, or the failure it maps to.
    func send(
        _ method: String, _ path: String, query: String? = nil, form: StripeForm? = nil, key: String? = nil
    ) async throws(Failure) -> Data {
        let what = "\(method) \(path)"
        let root =
            configuration.baseURL.absoluteString.hasSuffix("/")
            ? String(configuration.baseURL.absoluteString.dropLast())
            : configuration.baseURL.absoluteString
        guard let url = URL(string: root + path + (query.map { "?" + $0 } ?? "")) else {
            throw Failure(error: .rejected("cannot make a Stripe URL for \(what)"))
        }
        var headers = [
            "Authorization": "Bearer \(configuration.secretKey)", "Stripe-Version": configuration.apiVersion,
            "Accept": "application/json",
        ]
        if form != nil { headers["Content-Type"] = "application/x-www-form-urlencoded" }
        if let key { headers["Idempotency-Key"] = key }
        let response: HTTPClientResponse
        do {
            response = try await client.send(
                HTTPClientRequest(
                    method: method, url: url, headers: headers,
                    body: form.map { Data($0.encoded.utf8) }, timeout: configuration.timeout))
        } catch HTTPClientError.timedOut {
            throw Failure(error: .ambiguous("Stripe did not answer \(what) within \(configuration.timeout)"))
        } catch let HTTPClientError.network(detail) {
            throw Failure(error: .ambiguous("Stripe could not be reached for \(what): \(detail)"))
        } catch {
            throw Failure(error: .ambiguous("\(what) to Stripe failed: \(error)"))
        }
        if (200..<300).contains(response.status) { return response.body }
        let envelope = try? JSONDecoder().decode(StripeWire.ErrorEnvelope.self, from: response.body)
        let message = envelope?.error.message ?? "Stripe answered \(response.status) to \(what)"
        switch response.status {
        case 402:
            let decline =
                envelope?.error.decline ?? GatewayDecline(code: "card_declined", declineCode: nil, message: message)
            throw Failure(error: .declined(decline, intent: envelope?.error.payment_intent?.intent))
        case 400, 404, 409:
            throw Failure(error: .rejected(message))
        case 401, 403:
            throw Failure(error: .rejected("Stripe refused the API key for \(what): \(message)"))
        default:
            throw Failure(
                error: .ambiguous("Stripe answered \(response.status) to \(what): \(message)"),
                replayed: response.header("Idempotent-Replayed") == "true")
        }
    }

    /// A PaymentIntent out of a 2xx body; an unreadable one is ambiguous (the call may have worked).
    func decodeIntent(_ body: Data, _ what: String) throws(Failure) -> GatewayIntent {
        guard let wire = try? JSONDecoder().decode(StripeWire.PaymentIntent.self, from: body), let intent = wire.intent
        else {
            throw Failure(
                error: .ambiguous("Stripe answered \(what) with a body that is not a PaymentIntent EnRoute can read"))
        }
        return intent
    }
}
