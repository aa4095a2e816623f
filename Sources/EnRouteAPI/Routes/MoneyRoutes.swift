import Foundation
public import HTTPEngine
public import EnRouteDomain
import EnRouteModels

/// What the money routes need beyond the trip service: the gateway's callbacks and the sandbox's challenge page.
public struct PaymentHooks: Sendable {
    /// Verifies a Stripe webhook (`Stripe-Signature` over the raw body) and reads its event; nil when no webhook secret
    /// is configured (the route then answers 404).
    public var stripeWebhook: (@Sendable (_ body: [UInt8], _ signature: String?) throws -> GatewayEvent)?
    /// Answers a sandbox bank challenge (true: the customer confirmed); nil unless the sandbox gateway is in use.
    public var sandboxChallenge: (@Sendable (_ intentId: String, _ confirm: Bool) async throws -> Bool)?
    /// Wakes the payment worker after a job was queued.
    public var wake: @Sendable () -> Void
    public init(
        stripeWebhook: (@Sendable ([UInt8], String?) throws -> GatewayEvent)? = nil,
        sandboxChallenge: (@Sendable (String, Bool) async throws -> Bool)? = nil,
        wake: @escaping @Sendable () -> Void = {}
    ) {
        self.stripeWebhook = stripeWebhook; self.sandboxChallenge = sandboxChallenge; self.wake = wake
    }
}

extension EnRouteAPI {
    /// Basket quotes, tips, ratings, receipts, history, the balance, earnings, basket changes and the gateway's
    /// callbacks.
    func addMoneyRoutes(_ r: inout Router) {
        guard let payments = service.payments else { return }
        addTripMoneyRoutes(&r, payments)
        addAccountMoneyRoutes(&r, payments)
        addGatewayRoutes(&r)
    }

    /// A trip's money: basket quotes, the trip list, tips, ratings and receipts.
    private func addTripMoneyRoutes(_ r: inout Router, _ payments: TripPayments) {
        r.post(
            APIPath.Template.orderQuote,
            limited(.estimates) { req in
                let account = try auth.account(for: req, roles: [.customer])
                let body = try req.decode(OrderQuoteRequest.self)
                let quote = try await mapAsync { try await payments.quotes.orderQuote(body, for: account) }
                return try .json(quote.orderQuote)
            })
        r.get(APIPath.Template.trips) { req in
            let account = try auth.account(for: req)
            let page = try ListPage(req.query, defaultLimit: 20)
            let query: TripQuery =
                switch account.role {
                case .ops, .backend: .all(status: nil)
                case .customer, .provider, .merchant: .party(account.role, id: account.id)
                }
            return try .json(ListPage.list(service.trips(query, after: page.cursor, limit: page.limit), wire))
        }
        r.post(
            APIPath.Template.tripTip,
            limited(
                .steps,
                idempotency.wrap(.required, render: snapshotRender(status: 201)) { req in
                    let account = try auth.account(for: req, roles: [.customer])
                    let id = try req.parameter("id")
                    let body = try req.decode(TipRequest.self)
                    _ = try map { try service.trip(id, for: account) }
                    return (
                        account,
                        { ctx in try await service.tip(id, amountMinor: body.amountMinor, by: account, idempotency: ctx)
                        }
                    )
                }))
        r.post(
            APIPath.Template.tripRating,
            limited(.steps) { req in
                let account = try auth.account(for: req, roles: [.customer, .provider])
                let id = try req.parameter("id")
                let body = try req.decode(RatingRequest.self)
                let trip = try await mapAsync {
                    try await service.rate(id, stars: body.stars, comment: body.comment, by: account)
                }
                return try .json(wire.snapshot(trip), status: 201)
            })
        r.get(APIPath.Template.tripReceipt) { [providers] req in
            let account = try auth.account(for: req, roles: [.customer, .ops])
            let id = try req.parameter("id")
            _ = try map { try service.trip(id, for: account) }
            let path = try await providers.paths.path(tripId: id).map { Coordinate(lat: $0.lat, lng: $0.lng) }
            guard let receipt = try map({ try service.receipt(of: id, for: account, path: path) }) else {
                var e = HTTPError.notFound("No receipt yet: the payment is still being settled.")
                e.headers.set("Retry-After", "5")
                throw e
            }
            return try .json(receipt)
        }
    }

    /// The customer's balance and its settlement, the provider's earnings, the merchant's basket changes.
    private func addAccountMoneyRoutes(_ r: inout Router, _ payments: TripPayments) {
        r.get(APIPath.Template.accountBalance) { req in
            let account = try auth.account(for: req, roles: [.customer])
            return try .json(try payments.balance(of: account.id))
        }
        r.post(
            APIPath.Template.accountBalanceSettle,
            limited(.creates) { req in
                let account = try auth.account(for: req, roles: [.customer])
                guard let key = req.headers["Idempotency-Key"]?.trimmingCharacters(in: .whitespaces),
                    (8...255).contains(key.count),
                    key.allSatisfy({ $0.isASCII && !$0.isWhitespace })
                else {
                    throw HTTPError.badRequest(
                        "This request needs an Idempotency-Key header (8 to 255 visible ASCII characters, such "
                            + "as a UUID)."
                    )
                }
                let balance = try await mapAsync { try await service.settleBalance(by: account, key: key.lowercased()) }
                return try .json(balance)
            })
        r.get(APIPath.Template.providerEarnings) { req in
            let account = try auth.account(for: req, roles: [.provider])
            let from = try Self.timeQuery(req, "from"), to = try Self.timeQuery(req, "to")
            guard from < to, to.timeIntervalSince(from) <= 366 * 86_400 else {
                throw HTTPError.invalid("/to", "must be after from, at most a year later")
            }
            let rows = try service.store.ledger(account: Ledger.provider(account.id), from: from, to: to)
            return try .json(Receipts.earnings(rows, from: from, to: to, currency: payments.rules.currency))
        }
        r.post(
            APIPath.Template.merchantOrderItems,
            limited(
                .steps,
                idempotency.wrap(.optional, render: snapshotRender()) { req in
                    let account = try auth.account(for: req, roles: [.merchant])
                    let id = try req.parameter("id")
                    let body = try req.decode(BasketChangeRequest.self)
                    return (
                        account,
                        { ctx in
                            try await service.changeBasket(id, changes: body.changes, by: account, idempotency: ctx)
                        }
                    )
                }))
    }

    /// The gateway's callbacks: Stripe's webhooks, and the sandbox's bank challenge page.
    private func addGatewayRoutes(_ r: inout Router) {
        r.post(APIPath.Template.stripeWebhook) { [paymentHooks] req in
            guard let verify = paymentHooks.stripeWebhook else {
                throw HTTPError.notFound("Stripe webhooks are not configured on this server.")
            }
            let event: GatewayEvent
            do { event = try verify(req.body, req.headers["Stripe-Signature"]) } catch {
                throw HTTPError(status: 400, title: "Bad Request", detail: "The webhook was refused: \(error)")
            }
            // Acknowledged at once; applied by the payment worker (a repeated event id is queued once, one it ignores
            // not at all).
            if try await service.enqueuePaymentJob(.event(event)) { paymentHooks.wake() }
            return try .json(["received": true])
        }
        r.get(APIPath.Template.sandboxChallenge) { [paymentHooks] req in
            guard paymentHooks.sandboxChallenge != nil else { throw HTTPError.notFound() }
            let id = try req.parameter("id")
            let escaped = id.filter { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" }
            return .text(
                """
                <!doctype html><meta charset="utf-8"><title>Sandbox bank</title>
                <h1>Confirm this payment</h1><p>EnRoute's sandbox stands in for your bank's 3-D Secure page (payment \
                \(escaped)).</p>
                <form method="post"><button name="confirm" value="true">Confirm</button> <button name="confirm" \
                value="false">Refuse</button></form>
                """, contentType: "text/html; charset=utf-8")
        }
        r.post(APIPath.Template.sandboxChallenge) { [paymentHooks] req in
            guard let answer = paymentHooks.sandboxChallenge else { throw HTTPError.notFound() }
            let id = try req.parameter("id")
            let text = String(decoding: req.body, as: UTF8.self)
            let confirm = !text.contains("confirm=false") && !text.contains("\"confirm\":false")
            guard try await answer(id, confirm) else { throw HTTPError.notFound("No challenge \(id) is waiting.") }
            return .text(
                confirm ? "Payment confirmed. Return to the app and confirm your request again." : "Payment refused.")
        }
    }

    /// A stored answer with the party-neutral snapshot and `status`.
    func snapshotRender(status: Int) -> @Sendable (Result<TripRecord, TripError>) -> StoredResponse {
        { [wire] result in
            switch result {
            case .success(let trip): return APIErrors.stored(status: status, json: wire.snapshot(trip))
            case .failure(let error): return APIErrors.stored(APIErrors.httpError(error) { wire.snapshot($0) })
            }
        }
    }

    /// A required ISO 8601 time query parameter; 422 naming it when missing or malformed.
    static func timeQuery(_ req: HTTPRequest, _ name: String) throws(HTTPError) -> Date {
        guard let text = req.query[name], let date = try? Date(text, strategy: .iso8601) else {
            throw HTTPError.invalid("/\(name)", "must be an ISO 8601 time such as 2026-12-01T00:00:00Z")
        }
        return date
    }
}
