import HTTPEngine
import EnRouteDomain
import EnRouteModels

extension EnRouteAPI {
    /// Issue 13 item 3: a customer's saved payment methods, masked (brand, last 4, expiry); the token never leaves the
    /// server.
    func addPaymentMethodRoutes(_ r: inout Router) {
        r.get(APIPath.Template.paymentMethods) { req in
            let account = try auth.account(for: req, roles: [.customer])
            let methods = try await Self.mapPaymentMethods { try await paymentMethods.list(for: account.id) }
            return try .json(PaymentMethodList(methods: methods.map(Self.summary)))
        }
        r.post(
            APIPath.Template.paymentMethods,
            limited(.steps) { req in
                let account = try auth.account(for: req, roles: [.customer])
                let body = try req.decode(PaymentMethodRequest.self)
                let (method, created) = try await Self.mapPaymentMethods {
                    try await paymentMethods.add(
                        token: body.token, makeDefault: body.makeDefault ?? false, for: account.id)
                }
                return try .json(Self.summary(method), status: created ? 201 : 200)
            })
        r.delete(
            APIPath.Template.paymentMethod,
            limited(.steps) { req in
                let account = try auth.account(for: req, roles: [.customer])
                let id = try req.parameter("id")
                try await Self.mapPaymentMethods { try await paymentMethods.remove(id: id, for: account.id) }
                return .empty(204)
            })
        r.post(
            APIPath.Template.paymentMethodDefault,
            limited(.steps) { req in
                let account = try auth.account(for: req, roles: [.customer])
                let id = try req.parameter("id")
                let method = try await Self.mapPaymentMethods {
                    try await paymentMethods.setDefault(id: id, for: account.id)
                }
                return try .json(Self.summary(method))
            })
    }

    /// What a customer sees of a saved method: display details only.
    static func summary(_ method: StoredPaymentMethod) -> PaymentMethodSummary {
        PaymentMethodSummary(
            id: method.id, brand: method.card.brand, last4: method.card.last4, expMonth: method.card.expMonth,
            expYear: method.card.expYear, isDefault: method.isDefault)
    }

    /// `body`'s value, a `PaymentMethodError` mapped to its problem.
    static func mapPaymentMethods<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as PaymentMethodError {
            switch error {
            case .malformedToken:
                throw HTTPError.invalid(
                    "/token",
                    "must be a payment token from the payment provider's page: pm_ followed by letters, digits and "
                        + "underscores"
                )
            case .unknownToken(let message):
                throw HTTPError.invalid("/token", "the payment provider does not know this token (\(message))")
            case .limitReached(let limit):
                throw HTTPError(
                    status: 422, title: "Unprocessable Content",
                    detail: "An account keeps at most \(limit) payment methods; remove one before adding another.")
            case .notFound:
                throw HTTPError.notFound("No such payment method.")
            case .gatewayUnavailable:
                throw HTTPError.unavailable(
                    retryAfterSeconds: 5, detail: "The payment provider did not answer; try again.")
            }
        }
    }
}
