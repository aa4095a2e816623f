import Foundation
import HTTPTransport
import CurlTransport
import EnRouteDomain
import EnRouteModels
import EnRouteSandbox
import EnRouteStripe

/// `enroute serve`'s payment gateway: the in-process sandbox or Stripe, with its webhook verifier.
extension ServeCommand {
    /// The gateway `--payments` names, and the webhook verifier that goes with it.
    static func paymentGateway(
        _ options: Options, publicURL: URL
    ) throws
        -> (any PaymentGateway, (@Sendable ([UInt8], String?) throws -> GatewayEvent)?)
    {
        let choice = options.sourced("payments")
        switch choice?.value ?? "sandbox" {
        case "sandbox":
            if options.string("stripe-url") != nil { throw CLIError("--stripe-url needs --payments stripe") }
            log(
                "payments: the in-process sandbox (Stripe's test payment methods; bank challenges at "
                    + "\(APIPath.Template.sandboxChallenge))"
            )
            return (SandboxGateway(baseURL: publicURL, ids: RandomIDGenerator(), now: { Date() }), nil)
        case "stripe":
            guard let key = options.secret("ENROUTE_STRIPE_KEY") else {
                throw CLIError("--payments stripe needs the secret key in ENROUTE_STRIPE_KEY (sk_test_… or sk_live_…)")
            }
            guard key.hasPrefix("sk_") || key.hasPrefix("rk_") else {
                throw CLIError("ENROUTE_STRIPE_KEY must be a secret or restricted key (sk_… or rk_…)")
            }
            var base = URL(string: "https://api.stripe.com")!
            if let (text, source) = options.sourced("stripe-url") {
                guard let url = URL(string: text), ["http", "https"].contains(url.scheme ?? ""), url.host != nil else {
                    throw CLIError("\(source): \(text) is not an http(s) URL with a host")
                }
                base = url
            }
            let secrets = (options.secret("ENROUTE_STRIPE_WEBHOOK_SECRET") ?? "").split(separator: ",").map {
                $0.trimmingCharacters(in: .whitespaces)
            }.filter { !$0.isEmpty }
            if let bad = secrets.first(where: { !$0.hasPrefix("whsec_") }) {
                throw CLIError(
                    "ENROUTE_STRIPE_WEBHOOK_SECRET: \(bad.prefix(6))… is not a webhook signing secret (whsec_…)")
            }
            let gateway = StripeGateway(
                configuration: StripeConfiguration(secretKey: key, returnURL: publicURL, baseURL: base),
                client: CurlHTTPClient(), retry: StripeRetryPolicy(sleep: { try await Task.sleep(for: $0) }))
            log(
                "payments: Stripe at \(base)"
                    + (secrets.isEmpty
                        ? " (no webhook secret: /v1/payments/webhooks/stripe answers 404)"
                        : ", \(secrets.count) webhook secret(s)"))
            let webhook: (@Sendable ([UInt8], String?) throws -> GatewayEvent)? =
                secrets.isEmpty
                ? nil
                : { @Sendable body, header in
                    try StripeWebhookVerifier.verify(payload: body, header: header, secrets: secrets, now: Date())
                }
            return (gateway, webhook)
        case let other:
            throw CLIError("\(choice?.source ?? "--payments"): \(other) is not a gateway (sandbox or stripe)")
        }
    }
}
